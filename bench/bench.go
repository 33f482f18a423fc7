// Package bench is the load generator of `touchpoint bench`: it
// posts N events at concurrency C to a running stack, waits until every
// invite is sent and reports throughput and latency as one JSON object.
// Without a base URL it starts `touchpoint dev` (Options.Executable) as a
// child process, in a temporary data dir and a fresh PostgreSQL database,
// with the rate limit raised. With Baseline it also measures
// the bare ceilings of the same PostgreSQL and Temporal (baseline.go).
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/touchpoint/touchpoint/sendtime"
	"github.com/touchpoint/touchpoint/temporalclient"
)

// Options are the flags of `touchpoint bench` and what the command adds.
type Options struct {
	Events, Concurrency int
	Baseline            bool
	Timeout             time.Duration
	Target              Target
	// Executable is the touchpoint binary started as `touchpoint dev`
	// when Target.BaseURL is empty (the command passes os.Executable()).
	Executable string
	// APIExecutable is the binary started as `touchpoint api` beside dev
	// for the backfill (default Executable): the production build, which
	// leaves the embedded Temporal server out, is what runs in production.
	APIExecutable string
	// LogLevel is the child's TOUCHPOINT_LOG_LEVEL; empty keeps its default.
	LogLevel string
	// DBMaxConns is the children's TOUCHPOINT_DB_MAX_CONNS, bench's own
	// (tests keep it small); 0 keeps their default.
	DBMaxConns int
	// Stderr gets the progress bar (when it is a terminal) and the
	// Temporal SDK's warnings; nil discards them.
	Stderr io.Writer
	// ProfileDir, when set, is where bench writes dev's CPU, block and
	// mutex profiles of the first second of the timed accepts (dev then
	// serves them: TOUCHPOINT_PPROF); only when bench starts dev.
	ProfileDir string

	// BatchEvents events are posted through POST /events/batch at each of
	// BatchSizes, BatchConcurrency requests at once (0: no batch runs).
	BatchEvents, BatchConcurrency int
	BatchSizes                    []int
	// Backfill events are posted in batches of 500 to measure the drain of
	// their start orders and the peak memory meanwhile (0: none); the
	// drain is timed over the first DrainSample orders (0: all of them).
	Backfill, DrainSample int
	// Reminder is the delay (ISO 8601) of a reminder after each invite of
	// the run ("": none): temporal_actions then counts what an invite with
	// its reminder costs, as bench waits until every run has ended. With
	// Capacity, the delay of the reminders of its share (default PT2M).
	Reminder string
	// Capacity runs the capacity mix instead (Capacity, capacity.go).
	Capacity CapacityOptions
}

// Target is the stack under measurement. DatabaseURL is optional against
// BaseURL: without it bench polls the API, and Baseline needs it.
type Target struct {
	BaseURL, AuthURL                  string
	ClientID, ClientSecret, ChannelID string
	DatabaseURL                       string
	// Temporal is the stack's Temporal, for Baseline: against BaseURL,
	// Temporal's own environment configuration (TEMPORAL_ADDRESS,
	// TEMPORAL_TLS_*, TEMPORAL_API_KEY, a temporal.toml profile) as every
	// touchpoint process reads it, with --temporal-address and
	// --temporal-namespace over it.
	Temporal temporalclient.Config
}

// Usage is the text of `touchpoint bench -h` above the flags.
const Usage = `usage: touchpoint bench [--events N] [--concurrency C] [--baseline]
       [--base-url U --auth-url A --client-id … --client-secret … --channel-id …]
       [--database-url …] [--temporal-address … --temporal-namespace …]
       [--batch-events N] [--batch-sizes 1,50,500] [--batch-concurrency 8]
       [--backfill N [--drain-sample 20000] [--api-executable bin/touchpoint-prod]]
       [--reminder PT1S] [--profile DIR]
       touchpoint bench --capacity [--events N] [--reminder-share 0.3] [--review-share 0.15]
       [--capacity-doc docs/capacity.md] [--load-note …]
       [--base-url … --database-url … --api-metrics U,… --worker-metrics U,…
        --temporal-metrics U --postgres-pid N --secret-key … --postmark-user … --postmark-password …]

Without --base-url, bench starts "touchpoint dev" itself (temporary data dir,
fresh PostgreSQL database on the server of --database-url, free ports, rate
limit raised) and stops it at the end. Before the clock starts it sends C
events of an event type of their own end to end and waits for their invites.
Against --base-url the client's rate limit must allow the run, and --baseline
reaches its Temporal as the stack's processes do: TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TEMPORAL_TLS_*, TEMPORAL_API_KEY or a temporal.toml profile
(TEMPORAL_PROFILE), the flags over them.

Then it posts --batch-events events through POST /events/batch at each batch
size (with --baseline beside a bare COPY of the same rows), and with --backfill
N it posts N events in batches of 500 and measures how fast the starters drain
their start orders (the first --drain-sample of them; with --baseline beside
bare StartWorkflow calls). When
bench started dev, the backfill goes to a "touchpoint api" process it starts
beside dev (--api-executable) and the JSON line has that API's peak RSS.
These events are of an event type whose settings are inactive: their
workflows record "skipped" and send nothing.

With --reminder, each invite of the run is followed by a reminder after that
delay; the Temporal Actions are counted once every reminder is sent.

With --capacity, bench runs a realistic mix instead — N invites, a reminder
for a share of them, reviews through the feedback form for a share, a delivery
report of the mail provider (Postmark's) for every mail, a webhook endpoint
subscribed to every event type — and measures what an invite costs: PostgreSQL
rows, table, index and WAL bytes, Temporal Actions and history, CPU seconds of
the processes. It prints them as JSON and writes the capacity model that
follows from them to --capacity-doc. Against --base-url the stack must trust
bench's address as a proxy (TOUCHPOINT_TRUSTED_PROXIES: bench spreads the
customers and reports over addresses of their own), allow webhooks to
127.0.0.1 (TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE) and take Postmark's reports; the
WAL measured is the PostgreSQL server's, so nothing else may write to it.`

// ParseFlags reads the flags of `touchpoint bench`; getenv supplies the
// defaults named in their help, stderr gets the usage and flag errors.
// Executable, LogLevel and Stderr are left for the caller.
func ParseFlags(args []string, getenv func(string) string, stderr io.Writer) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, Usage); fs.PrintDefaults() }
	fs.IntVar(&o.Events, "events", 1000, "events to post (N); the default takes about a minute on 2 cores")
	fs.IntVar(&o.Concurrency, "concurrency", 32, "requests in flight at once (C)")
	fs.BoolVar(&o.Baseline, "baseline", false, "also measure bare PostgreSQL inserts and Temporal workflows")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "give up after this long")
	t := &o.Target
	fs.StringVar(&t.BaseURL, "base-url", "", "API of a running stack (default: start touchpoint dev)")
	fs.StringVar(&t.AuthURL, "auth-url", "", "issuer of a running stack")
	fs.StringVar(&t.ClientID, "client-id", getenv("CLIENT_ID"), "client of a running stack (default $CLIENT_ID)")
	fs.StringVar(&t.ClientSecret, "client-secret", getenv("CLIENT_SECRET"), "its secret (default $CLIENT_SECRET)")
	fs.StringVar(&t.ChannelID, "channel-id", getenv("CHANNEL_ID"), "channel of the events (default $CHANNEL_ID)")
	fs.StringVar(&t.DatabaseURL, "database-url", getenv("DATABASE_URL"), "PostgreSQL of the stack; without --base-url, the server for the temporary database (default $DATABASE_URL)")
	temporalAddress := fs.String("temporal-address", "", "Temporal of a running stack, for --baseline (default: Temporal's configuration, $TEMPORAL_ADDRESS or a profile, else 127.0.0.1:7233)")
	temporalNamespace := fs.String("temporal-namespace", "", "its namespace (default: Temporal's configuration, $TEMPORAL_NAMESPACE or a profile, else default)")
	fs.IntVar(&o.BatchEvents, "batch-events", 5000, "events posted through POST /events/batch at each batch size (0: none)")
	sizes := fs.String("batch-sizes", "1,50,500", "events per batch request, comma-separated")
	fs.IntVar(&o.BatchConcurrency, "batch-concurrency", 8, "batch requests in flight at once")
	fs.IntVar(&o.Backfill, "backfill", 0, "events of a backfill whose drain and peak memory are measured (0: none)")
	fs.IntVar(&o.DrainSample, "drain-sample", 20000, "time the backfill's drain over its first N start orders and discard the rest (0: the whole backlog)")
	fs.StringVar(&o.APIExecutable, "api-executable", "", "touchpoint binary run as the API process beside dev for --backfill, e.g. bin/touchpoint-prod (default: this one)")
	fs.StringVar(&o.ProfileDir, "profile", "", "write dev's CPU, block and mutex profiles of the first second of the timed accepts to this directory (bench starts dev; post 5,000 events or more so that the accepts outlast the second)")
	fs.StringVar(&o.Reminder, "reminder", "", "send each invite's reminder after this delay (ISO 8601, e.g. PT1S; default: none; with --capacity PT2M)")
	c := &o.Capacity
	fs.BoolVar(&c.On, "capacity", false, "run the capacity mix and write the capacity model")
	fs.Float64Var(&c.ReminderShare, "reminder-share", 0.3, "--capacity: share of the invites whose setting has a reminder")
	fs.Float64Var(&c.ReviewShare, "review-share", 0.15, "--capacity: share of the invites reviewed")
	fs.StringVar(&c.Doc, "capacity-doc", "docs/capacity.md", "--capacity: where to write the capacity model (empty: nowhere)")
	fs.StringVar(&c.LoadNote, "load-note", "", "--capacity: the document's word on the machine's load (default: the load average read during the run)")
	fs.StringVar(&c.Topology, "topology", "", "--capacity: what ran, for the document's header")
	apiMetrics := fs.String("api-metrics", "", "--capacity against --base-url: the API processes' /metrics URLs, comma-separated (their CPU)")
	workerMetrics := fs.String("worker-metrics", "", "--capacity against --base-url: the worker processes' /metrics URLs, comma-separated")
	fs.StringVar(&c.TemporalMetrics, "temporal-metrics", "", "--capacity against --base-url: the Temporal server's /metrics URL (its action metric)")
	fs.IntVar(&c.PostgresPID, "postgres-pid", 0, "--capacity: process ID of the PostgreSQL server when it runs on this machine (its CPU; 0: not measured)")
	fs.StringVar(&c.SecretKey, "secret-key", getenv("TOUCHPOINT_SECRET_KEY"), "--capacity against --base-url: the stack's secret key, to follow feedback links (default $TOUCHPOINT_SECRET_KEY)")
	fs.StringVar(&c.FeedbackURL, "feedback-url", "", "--capacity: the stack's feedback page (default {base URL}/feedback)")
	fs.StringVar(&c.PostmarkUser, "postmark-user", getenv("TOUCHPOINT_POSTMARK_WEBHOOK_USER"), "--capacity against --base-url: the stack's Postmark webhook user")
	fs.StringVar(&c.PostmarkPassword, "postmark-password", getenv("TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD"), "--capacity against --base-url: its password")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if v := getenv("TOUCHPOINT_DB_MAX_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			return o, fmt.Errorf("bench: TOUCHPOINT_DB_MAX_CONNS: %q is not a connection count of 2 or more", v)
		}
		o.DBMaxConns = n
	}
	c.APIMetrics, c.WorkerMetrics = splitList(*apiMetrics), splitList(*workerMetrics)
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 500 {
			return o, fmt.Errorf("bench: --batch-sizes: %q is not a size from 1 to 500", f)
		}
		o.BatchSizes = append(o.BatchSizes, n)
	}
	if t.BaseURL != "" { // else bench starts dev and dials its Temporal
		flags := map[string]string{"TEMPORAL_ADDRESS": *temporalAddress, "TEMPORAL_NAMESPACE": *temporalNamespace}
		tc, err := temporalclient.Load(func(k string) string {
			if v := flags[k]; v != "" {
				return v
			}
			return getenv(k)
		})
		if err != nil {
			return o, fmt.Errorf("bench: %w", err)
		}
		t.Temporal = tc
	}
	return o, o.validate()
}

// splitList reads a comma-separated list, leaving out empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// validDelay reports whether d is a delay the API takes.
func validDelay(d string) bool {
	_, err := sendtime.ParseDuration(d)
	return err == nil
}

func (o Options) validate() error {
	t := o.Target
	switch {
	case o.Events < 1 || o.Concurrency < 1:
		return errors.New("bench: --events and --concurrency must be at least 1")
	case o.BatchEvents < 0 || o.Backfill < 0 || o.DrainSample < 0 || (o.BatchEvents+o.Backfill > 0 && o.BatchConcurrency < 1):
		return errors.New("bench: --batch-events, --backfill and --drain-sample must not be negative, --batch-concurrency at least 1")
	case o.Reminder != "" && !validDelay(o.Reminder):
		return fmt.Errorf("bench: --reminder: %q is not an ISO 8601 duration (PT1S)", o.Reminder)
	}
	if err := o.Capacity.validate(t, t.BaseURL == ""); err != nil {
		return err
	}
	switch {
	case t.BaseURL == "":
		return nil
	case o.ProfileDir != "":
		return errors.New("bench: --profile profiles the dev that bench starts: leave out --base-url")
	case t.AuthURL == "" || t.ClientID == "" || t.ClientSecret == "" || t.ChannelID == "":
		return errors.New("bench: --base-url needs --auth-url, --client-id, --client-secret and --channel-id")
	case o.Baseline && t.DatabaseURL == "":
		return errors.New("bench: --baseline against --base-url needs --database-url")
	}
	return nil
}

// Result is the JSON line bench prints.
type Result struct {
	Events             int     `json:"events"`
	Concurrency        int     `json:"concurrency"`
	Accepted           int     `json:"accepted"`
	AcceptedPerS       float64 `json:"accepted_per_s"`
	AcceptP50MS        float64 `json:"accept_p50_ms"`
	AcceptP95MS        float64 `json:"accept_p95_ms"`
	AcceptP99MS        float64 `json:"accept_p99_ms"`
	InvitesSent        int     `json:"invites_sent"`
	InvitesPerS        float64 `json:"invites_per_s"`
	InviteLatencyP50MS float64 `json:"invite_latency_p50_ms"`
	InviteLatencyP99MS float64 `json:"invite_latency_p99_ms"`
	// InviteLagMaxMS is the largest lag of an invite past its due time:
	// bench's invites are due on arrival (a PT0S setting without a send
	// window), so it is the longest from an event's arrival to its send.
	InviteLagMaxMS float64 `json:"invite_lag_max_ms"`
	// Actions are the Temporal Actions of the invites, when bench started
	// dev (its embedded server's `action` metric); null against a running
	// stack.
	Actions   *Actions       `json:"temporal_actions"`
	Errors    map[string]int `json:"errors"`
	PeakRSSMB *float64       `json:"peak_rss_mb"`
	Baseline  *Baseline      `json:"baseline,omitempty"`
	Ratios    *Ratios        `json:"ratios,omitempty"`
	Batch     *BatchResult   `json:"batch,omitempty"`
}

// Ratios compare the stack with the same run's baselines.
type Ratios struct {
	AcceptedVsInserts          float64 `json:"accepted_vs_inserts"`
	AcceptedVsInsertsUnderLoad float64 `json:"accepted_vs_inserts_under_load"`
	InvitesVsCompletions       float64 `json:"invites_vs_completions"`
}

// Run measures o.Target, or a `touchpoint dev` it starts and stops when
// o.Target.BaseURL is empty. A non-nil result comes with an error when
// the run ended early (not every invite sent); it still describes what
// was measured.
func Run(ctx context.Context, o Options) (*Result, error) {
	ctx, cancel, dev, err := begin(ctx, &o)
	if err != nil {
		return nil, err
	}
	defer cancel()
	if dev == nil {
		return measure(ctx, o, nil)
	}
	res, err := measure(ctx, o, dev)
	return res, errors.Join(err, dev.stop())
}

// begin checks o, bounds ctx by its timeout and, without a base URL,
// starts `touchpoint dev` and points o at it; the caller stops dev.
func begin(ctx context.Context, o *Options) (context.Context, context.CancelFunc, *devChild, error) {
	if err := o.validate(); err != nil {
		return ctx, nil, nil, err
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	cancel := context.CancelFunc(func() {})
	if o.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
	}
	if o.Target.BaseURL != "" {
		return ctx, cancel, nil, nil
	}
	if o.Executable == "" {
		cancel()
		return ctx, nil, nil, errors.New("bench: no touchpoint executable to start dev with")
	}
	dev, err := startDevChild(ctx, o.Executable, o.Target.DatabaseURL, o.LogLevel, o.DBMaxConns, o.ProfileDir != "")
	if err != nil {
		cancel()
		return ctx, nil, nil, err
	}
	o.Target = dev.target
	return ctx, cancel, dev, nil
}

// measure runs the measurement against o.Target, which is dev when bench
// started it.
func measure(ctx context.Context, o Options, dev *devChild) (*Result, error) {
	prog := newProgress(o.Stderr)
	runID := benchRunID()
	api, err := newBenchAPI(ctx, o.Target, o.Concurrency)
	if err != nil {
		return nil, err
	}
	defer api.http.CloseIdleConnections()
	typ := "bench-" + runID
	etID, err := api.immediateEventType(ctx, typ, o.Reminder)
	if err != nil {
		return nil, err
	}
	res := &Result{Events: o.Events, Concurrency: o.Concurrency}
	var b Baseline
	var ins *insertBaseline
	if o.Baseline {
		if ins, err = openInsertBaseline(ctx, o.Target.DatabaseURL, o.Concurrency, runID); err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		defer ins.close()
	}
	if err := api.warmUp(ctx, typ, o.Concurrency, prog); err != nil {
		return nil, err
	}
	if err := api.warmPipeline(ctx, runID, o.Concurrency, prog); err != nil {
		return nil, err
	}
	var actionsBefore map[string]int64
	if dev != nil {
		if actionsBefore, err = dev.settledActions(ctx); err != nil {
			return nil, err
		}
	}
	var profiles *errgroup.Group
	if o.ProfileDir != "" {
		profiles = profileDev(ctx, dev, o.ProfileDir)
	}
	posts := api.fire(ctx, benchBodies(typ, o.Target.ChannelID, runID, o.Events), o.Concurrency, prog)
	posts.summarize(res)
	if profiles != nil {
		if err := profiles.Wait(); err != nil {
			return res, err
		}
	}
	if ins != nil {
		// The accepts shared the machine with the starter, the worker and
		// Temporal, which are still busy with their invites: bare inserts
		// timed now show what that costs PostgreSQL's own ceiling. This
		// delays the invites by the second or so it takes.
		if b.InsertsUnderLoadPerS, b.InsertUnderLoadP99MS, err = ins.measure(ctx, "pg inserts (load)", o.Events, o.Concurrency, prog); err != nil {
			return res, fmt.Errorf("baseline: %w", err)
		}
	}
	waitErr := waitInvitesSent(ctx, api, o.Target.DatabaseURL, typ, etID, res.Accepted, prog)
	events, err := api.listEvents(context.WithoutCancel(ctx), typ)
	if err != nil {
		return res, errors.Join(waitErr, err) // the accept figures at least
	}
	summarizeInvites(res, events)
	if dev != nil {
		res.PeakRSSMB = dev.peakRSSMB() // before the batch runs reset it
	}
	if waitErr != nil {
		return res, waitErr
	}
	if dev != nil {
		if err := measureActions(ctx, o, dev, events, actionsBefore, res); err != nil {
			return res, fmt.Errorf("temporal actions: %w", err)
		}
	}
	if o.Baseline {
		if err := runBaselines(ctx, o.Stderr, o.Target, ins, o.Events, o.Concurrency, runID, prog, &b); err != nil {
			return res, fmt.Errorf("baseline: %w", err)
		}
		res.Baseline = &b
		res.Ratios = &Ratios{
			AcceptedVsInserts:          round(ratio(res.AcceptedPerS, b.InsertsPerS), 3),
			AcceptedVsInsertsUnderLoad: round(ratio(res.AcceptedPerS, b.InsertsUnderLoadPerS), 3),
			InvitesVsCompletions:       round(ratio(res.InvitesPerS, b.WorkflowCompletionsPerS), 3),
		}
	}
	if o.BatchEvents == 0 && o.Backfill == 0 {
		return res, nil
	}
	if o.BatchEvents == 0 {
		o.BatchSizes = nil
	}
	res.Batch, err = measureBatches(ctx, o, api, dev, runID, prog)
	return res, err
}

// benchRunID keeps the names of one run (event type, addresses, workflow
// IDs, scratch table) apart from every other run's.
func benchRunID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return strconv.FormatInt(time.Now().Unix(), 36) + hex.EncodeToString(b)
}

// benchBodies returns n POST /events bodies, each to its own address:
// sends to one address are serialised, which is not what bench measures.
func benchBodies(typ, channelID, runID string, n int) [][]byte {
	bodies := make([][]byte, n)
	date := time.Now().UTC().Format(time.RFC3339)
	for i := range bodies {
		bodies[i], _ = json.Marshal(map[string]any{
			"customer":      map[string]any{"email": fmt.Sprintf("bench-%s-%d@example.com", runID, i), "firstName": "Ann"},
			"type":          typ,
			"channel":       map[string]any{"id": channelID},
			"transaction":   map[string]any{"reference": fmt.Sprintf("order-%d", i), "date": date},
			"system":        "touchpoint-bench",
			"systemVersion": "1.0",
		})
	}
	return bodies
}
