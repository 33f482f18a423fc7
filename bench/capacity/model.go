// Package capacity is what `touchpoint bench --capacity` measures of a
// stack and the capacity model that follows from it. The model (this
// file): what one invite of a realistic mix was measured to cost, turned
// into what 10 thousand, 1 million and 10 million invites a day need.
// Pure: Model computes, WriteDoc renders docs/capacity.md from
// capacity.md.tmpl. What the stack spent is read from outside its
// processes (measure.go); the run that drives the mix is package bench's,
// on its load generator.
package capacity

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// Measurements are what a capacity run measured: the mix it ran and, per
// invite of it, what PostgreSQL, Temporal and the processes spent.
type Measurements struct {
	Taken time.Time `json:"taken"`
	// Revision is the VCS revision of the binary that ran ("": unknown).
	Revision string `json:"revision"`
	// Topology says what ran: `touchpoint dev`, or the processes of a
	// running stack.
	Topology string `json:"topology"`
	// Load is the header's word on the machine: a note given with
	// --load-note, else the load average read during the run.
	Load string `json:"load"`
	Mix  Mix    `json:"mix"`

	// Per invite of the mix.
	Tables    []TableCost `json:"tables"`     // PostgreSQL, by table
	RowWrites float64     `json:"row_writes"` // rows inserted, updated and deleted
	WALBytes  float64     `json:"wal_bytes"`
	// Actions are the Temporal Actions by the server's `action` metric,
	// ActionsByType by its action_type.
	Actions       float64            `json:"actions"`
	ActionsByType map[string]float64 `json:"actions_by_type"`
	// Workflows, HistoryEvents and HistoryBytes are the Temporal
	// workflows of an invite (its own and its webhook deliveries') and
	// the events and bytes of their histories.
	Workflows     float64 `json:"workflows"`
	HistoryEvents float64 `json:"history_events"`
	HistoryBytes  float64 `json:"history_bytes"`
	// CPU seconds of the processes; nil where they were not measured.
	// Combined is set instead of API and Worker when one process runs
	// both (`touchpoint dev`, whose embedded Temporal server it counts
	// too).
	APICPU      *float64 `json:"api_cpu_seconds"`
	WorkerCPU   *float64 `json:"worker_cpu_seconds"`
	CombinedCPU *float64 `json:"combined_cpu_seconds"`
	PostgresCPU *float64 `json:"postgres_cpu_seconds"`

	// InsertCeiling is what this PostgreSQL commits at most: bare
	// single-row insert transactions per second at the run's
	// concurrency, measured in the same run (0: not measured).
	InsertCeiling float64 `json:"insert_ceiling_per_s"`
}

// Mix is the work of a capacity run, as it was done.
type Mix struct {
	Invites     int `json:"invites"`
	Reminders   int `json:"reminders"`    // reminders sent
	Reviews     int `json:"reviews"`      // feedback forms posted
	Reports     int `json:"reports"`      // mail providers' reports posted
	Deliveries  int `json:"deliveries"`   // webhook deliveries made
	Endpoints   int `json:"endpoints"`    // webhook endpoints, subscribed to every event type
	Concurrency int `json:"concurrency"`  // requests in flight at once
	ReminderSet int `json:"reminder_set"` // invites whose setting has a reminder
}

// TableCost is what a table grew by, per invite.
type TableCost struct {
	Table      string  `json:"table"`
	Rows       float64 `json:"rows"`
	TableBytes float64 `json:"table_bytes"`
	IndexBytes float64 `json:"index_bytes"`
}

// Assumptions are the model's choices that no run measures; the
// document lists them.
type Assumptions struct {
	// PeakFactor: the busiest hour carries this many times the day's
	// average rate (shops send after deliveries, in working hours).
	PeakFactor float64
	// RetentionDays is how long events and their rows are kept
	// (TOUCHPOINT_EVENT_RETENTION's default).
	RetentionDays int
	// MonthDays is the length of a month.
	MonthDays int
	// Busy is how busy a process or server may be at the peak.
	Busy float64
	// ReplicaCores are the cores of one API or worker replica (the
	// Kubernetes manifests' limit).
	ReplicaCores float64
	// MinReplicas of the API and of the worker, for availability.
	MinReplicas int
	// OpenDays is how long an invite's workflow stays open: the default
	// delay (P7D), and for an invite with a reminder that many days more.
	OpenDays int
	// NamespaceRetentionDays is how long Temporal keeps a closed
	// workflow's history.
	NamespaceRetentionDays int
	// LargestPrimaryCores and LargestPrimaryTB are the largest single
	// PostgreSQL primary planned on: cores, and data at retention.
	LargestPrimaryCores float64
	LargestPrimaryTB    float64
}

// DefaultAssumptions are the assumptions of docs/capacity.md.
var DefaultAssumptions = Assumptions{PeakFactor: 3, RetentionDays: 400, MonthDays: 30, Busy: 0.6, ReplicaCores: 2,
	MinReplicas: 2, OpenDays: 7, NamespaceRetentionDays: 30, LargestPrimaryCores: 64, LargestPrimaryTB: 10}

// DailyVolumes are the invites a day the document sizes for.
var DailyVolumes = []int{10_000, 1_000_000, 10_000_000}

// Temporal Cloud's published prices (docs.temporal.io/cloud/pricing,
// Pay-As-You-Go on the Business plan): Actions by tier of the month's
// total, storage per GB-hour, and the plan's share of usage.
var (
	actionTiers = []struct{ upTo, perMillion float64 }{ // upTo in millions of Actions
		{5, 50}, {10, 45}, {20, 40}, {50, 35}, {100, 30}, {200, 25},
	}
)

const (
	// Over the last tier's 200 M Actions the price is Temporal's to
	// quote; the model keeps the last published rate, the most it costs.
	lastTierMillions = 200
	activeGBh        = 0.042
	retainedGBh      = 0.00105
	planShare        = 0.10 // Business: the greater of $500 or 10 % of usage
	planMinimum      = 500.0
)

// ActionsPrice is what n Actions in a calendar month cost at Temporal
// Cloud's published tiers.
func ActionsPrice(n float64) float64 {
	m, prev, price := n/1e6, 0.0, 0.0
	for _, t := range actionTiers {
		if m <= prev {
			break
		}
		price += (min(m, t.upTo) - prev) * t.perMillion
		prev = t.upTo
	}
	if m > lastTierMillions {
		price += (m - lastTierMillions) * actionTiers[len(actionTiers)-1].perMillion
	}
	return price
}

// Scale is what one daily volume needs.
type Scale struct {
	InvitesPerDay int
	// At the peak.
	PeakInvitesPerS, PeakRowWritesPerS, PeakWALMBPerS float64
	// Storage of PostgreSQL: growth a month, size at retention (tables
	// and indexes), WAL written a day.
	GrowthGBPerMonth, AtRetentionGB, WALGBPerDay float64
	// Temporal.
	ActionsPerDay, ActionsPerMonth                      float64
	ActionsPrice, ActiveStoragePrice, RetainedPrice     float64
	PlanPrice, TemporalPrice                            float64
	ActiveStorageGB, RetainedStorageGB                  float64
	APICores, WorkerCores, CombinedCores, PostgresCores *float64
	APIReplicas, WorkerReplicas                         int
	// PrimaryFits: one primary holds it: its data at retention, and its
	// cores where PostgreSQL's CPU was measured, within the largest
	// primary planned on.
	PrimaryFits bool
}

// Report is the model's answer: the measurements, the assumptions and
// each daily volume's needs, and where one primary stops.
type Report struct {
	M      Measurements
	A      Assumptions
	Scales []Scale
	// Bytes and rows of an invite over every table.
	Rows, TableBytes, IndexBytes float64
	// The invites a day at which the single primary stops: by its cores
	// (0: PostgreSQL's CPU not measured), by its data at retention, and
	// by the commits this run's PostgreSQL managed (0: not measured).
	StopByCores, StopByData, StopByCeiling float64
	// Stop is the least of those measured.
	Stop float64
}

// Model turns m into what the daily volumes need under a.
func Model(m Measurements, a Assumptions, volumes []int) Report {
	r := Report{M: m, A: a}
	for _, t := range m.Tables {
		r.Rows += t.Rows
		r.TableBytes += t.TableBytes
		r.IndexBytes += t.IndexBytes
	}
	bytesPerInvite := r.TableBytes + r.IndexBytes
	peak := func(perDay float64) float64 { return perDay / 86400 * a.PeakFactor }
	cores := func(cpu *float64, perS float64) *float64 {
		if cpu == nil {
			return nil
		}
		c := *cpu * perS / a.Busy
		return &c
	}
	replicas := func(c *float64) int {
		if c == nil {
			return a.MinReplicas
		}
		return max(a.MinReplicas, int(math.Ceil(*c/a.ReplicaCores)))
	}
	for _, d := range volumes {
		day := float64(d)
		s := Scale{InvitesPerDay: d, PeakInvitesPerS: peak(day)}
		s.PeakRowWritesPerS = s.PeakInvitesPerS * m.RowWrites
		s.PeakWALMBPerS = s.PeakInvitesPerS * m.WALBytes / 1e6
		s.GrowthGBPerMonth = day * float64(a.MonthDays) * bytesPerInvite / 1e9
		s.AtRetentionGB = day * float64(a.RetentionDays) * bytesPerInvite / 1e9
		s.WALGBPerDay = day * m.WALBytes / 1e9
		s.ActionsPerDay = day * m.Actions
		s.ActionsPerMonth = s.ActionsPerDay * float64(a.MonthDays)
		s.ActionsPrice = ActionsPrice(s.ActionsPerMonth)
		// Open workflows hold their histories in active storage for
		// OpenDays (twice that with a reminder), closed ones in retained
		// storage for the namespace's retention.
		open := float64(a.OpenDays) * (1 + reminderShare(m.Mix))
		s.ActiveStorageGB = day * open * m.HistoryBytes / 1e9
		s.RetainedStorageGB = day * float64(a.NamespaceRetentionDays) * m.HistoryBytes / 1e9
		hours := float64(a.MonthDays * 24)
		s.ActiveStoragePrice = s.ActiveStorageGB * hours * activeGBh
		s.RetainedPrice = s.RetainedStorageGB * hours * retainedGBh
		usage := s.ActionsPrice + s.ActiveStoragePrice + s.RetainedPrice
		s.PlanPrice = max(planMinimum, planShare*usage)
		s.TemporalPrice = usage + s.PlanPrice
		s.APICores = cores(m.APICPU, s.PeakInvitesPerS)
		s.WorkerCores = cores(m.WorkerCPU, s.PeakInvitesPerS)
		s.CombinedCores = cores(m.CombinedCPU, s.PeakInvitesPerS)
		s.PostgresCores = cores(m.PostgresCPU, s.PeakInvitesPerS)
		s.APIReplicas, s.WorkerReplicas = replicas(s.APICores), replicas(s.WorkerCores)
		if m.CombinedCPU != nil {
			s.APIReplicas, s.WorkerReplicas = replicas(s.CombinedCores), replicas(s.CombinedCores)
		}
		s.PrimaryFits = s.AtRetentionGB <= a.LargestPrimaryTB*1000 &&
			(s.PostgresCores == nil || *s.PostgresCores <= a.LargestPrimaryCores)
		r.Scales = append(r.Scales, s)
	}
	perDayAtPeak := 86400 / a.PeakFactor // invites a day for one invite/s at the peak
	if m.PostgresCPU != nil && *m.PostgresCPU > 0 {
		r.StopByCores = a.LargestPrimaryCores * a.Busy / *m.PostgresCPU * perDayAtPeak
	}
	if bytesPerInvite > 0 {
		r.StopByData = a.LargestPrimaryTB * 1e12 / (bytesPerInvite * float64(a.RetentionDays))
	}
	if m.InsertCeiling > 0 && m.RowWrites > 0 {
		r.StopByCeiling = m.InsertCeiling / m.RowWrites * perDayAtPeak
	}
	for _, v := range []float64{r.StopByCores, r.StopByData, r.StopByCeiling} {
		if v > 0 && (r.Stop == 0 || v < r.Stop) {
			r.Stop = v
		}
	}
	return r
}

// reminderShare is the share of the mix's invites whose setting has a
// reminder.
func reminderShare(m Mix) float64 {
	if m.Invites == 0 {
		return 0
	}
	return float64(m.ReminderSet) / float64(m.Invites)
}

//go:embed capacity.md.tmpl
var capacityTemplate string

// measurementsMark opens the comment at the end of the document that
// holds its measurements, the input it was rendered from: a test renders
// the committed document again from them and compares.
const measurementsMark = "<!-- measurements: "

// WriteDoc renders r as docs/capacity.md, its measurements at the
// end in a comment.
func WriteDoc(w io.Writer, r Report) error {
	var doc strings.Builder
	if err := renderCapacity(&doc, r); err != nil {
		return err
	}
	if err := checkTables(doc.String()); err != nil {
		return err
	}
	raw, err := json.Marshal(r.M)
	if err != nil {
		return err
	}
	// "--" may not appear in a comment; it can only be inside a JSON string.
	fmt.Fprintf(&doc, "\n%s%s -->\n", measurementsMark, strings.ReplaceAll(string(raw), "--", `-\u002d`))
	_, err = io.WriteString(w, doc.String())
	return err
}

// ReadMeasurements reads back the measurements a document of
// WriteDoc was rendered from.
func ReadMeasurements(doc string) (Measurements, error) {
	var m Measurements
	_, rest, ok := strings.Cut(doc, measurementsMark)
	raw, _, closed := strings.Cut(rest, " -->")
	if !ok || !closed {
		return m, errors.New("the document holds no measurements")
	}
	return m, json.Unmarshal([]byte(raw), &m)
}

// checkTables refuses a document with a Markdown table whose rows have
// another number of cells than its header: a figure left out of a row
// would shift every figure after it into the wrong column.
func checkTables(doc string) error {
	cells := 0
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "|") {
			cells = 0
			continue
		}
		n := strings.Count(strings.TrimSpace(line), "|") - 1
		if cells == 0 {
			cells = n
		} else if n != cells {
			return fmt.Errorf("capacity document: a table row of %d cells under a header of %d: %q", n, cells, line)
		}
	}
	return nil
}

func renderCapacity(w io.Writer, r Report) error {
	t, err := template.New("capacity").Funcs(template.FuncMap{
		"int":    func(v float64) string { return thousands(int64(math.Round(v))) },
		"num":    fixed,
		"bytes":  humanBytes,
		"gb":     func(v float64) string { return humanBytes(v * 1e9) },
		"usd":    func(v float64) string { return "$" + thousands(int64(math.Round(v))) },
		"perday": perDay,
		"pct":    func(v float64) string { return strconv.FormatFloat(v*100, 'f', 0, 64) + " %" },
		"share": func(n, of int) string {
			return strconv.FormatFloat(100*float64(n)/math.Max(1, float64(of)), 'f', 0, 64) + " %"
		},
		"per":     func(n, of int) string { return fixed(float64(n) / math.Max(1, float64(of))) },
		"cores":   coresOf,
		"sorted":  sortedTypes,
		"date":    func(t time.Time) string { return t.UTC().Format("2006-01-02") },
		"nonzero": nonzeroTables,
		"deref":   func(p *float64) float64 { return *p },
		"float":   func(i int) float64 { return float64(i) },
		"count":   func(i int) string { return thousands(int64(i)) },
	}).Parse(capacityTemplate)
	if err != nil {
		return fmt.Errorf("capacity template: %w", err)
	}
	return t.Execute(w, r)
}

// fixed writes v with as many decimals as its size deserves: 3 below 1,
// 2 below 10, 1 below 100, none above (with thousands separators).
func fixed(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case a < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return thousands(int64(math.Round(v)))
}

// thousands writes n with commas between its thousands.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// humanBytes writes a byte count in B, kB, MB, GB or TB (powers of 1000).
func humanBytes(v float64) string {
	for _, u := range []string{"B", "kB", "MB", "GB", "TB"} {
		if math.Abs(v) < 1000 || u == "TB" {
			return fixed(v) + " " + u
		}
		v /= 1000
	}
	return ""
}

// perDay writes a number of invites a day the way the document names
// the volumes: "10 thousand", "1 million", "3.13 million".
func perDay(v float64) string {
	trim := func(s string) string {
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		return s
	}
	switch {
	case v >= 1e6:
		return trim(fixed(v/1e6)) + " million"
	case v >= 1e3:
		return trim(fixed(v/1e3)) + " thousand"
	}
	return trim(fixed(v))
}

// coresOf writes a number of cores, or "not measured".
func coresOf(c *float64) string {
	if c == nil {
		return "not measured"
	}
	return fixed(*c)
}

// typeCount is an action type and its count.
type typeCount struct {
	Type  string
	Count float64
}

// sortedTypes lists the action types of m with their counts, most first.
func sortedTypes(m map[string]float64) []typeCount {
	out := make([]typeCount, 0, len(m))
	for t, c := range m {
		out = append(out, typeCount{t, c})
	}
	slices.SortFunc(out, func(a, b typeCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Type, b.Type)
	})
	return out
}

// nonzeroTables are the tables an invite changed, largest first.
func nonzeroTables(ts []TableCost) []TableCost {
	var out []TableCost
	for _, t := range ts {
		if t.Rows != 0 || t.TableBytes != 0 || t.IndexBytes != 0 {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b TableCost) int {
		if c := cmp.Compare(b.TableBytes+b.IndexBytes, a.TableBytes+a.IndexBytes); c != 0 {
			return c
		}
		return strings.Compare(a.Table, b.Table)
	})
	return out
}
