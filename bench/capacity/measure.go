package capacity

// What a capacity run reads of the stack, from outside its processes:
// PostgreSQL's catalogue and statistics (through store/pg), the Temporal
// server's `action` metric, the processes' CPU from their /metrics and,
// for a PostgreSQL on the same machine, from /proc; and what each invite
// cost between two snapshots of it.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/pg"
)

// Snapshot is what the stack has spent so far.
type Snapshot struct {
	DB                    pg.Footprint
	Actions               map[string]int64
	API, Worker, Combined []float64 // CPU seconds of each process
	Postgres              *float64
}

// Sources are where a snapshot is read.
type Sources struct {
	// DB is the stack's PostgreSQL.
	DB *sqlx.DB
	// TemporalMetrics is the /metrics of the Temporal server (or of
	// `touchpoint dev`, which embeds one), whose `action` metric of
	// Namespace counts the Actions.
	TemporalMetrics, Namespace string
	// CombinedMetrics is the /metrics of the one `touchpoint dev` process
	// ("": none), APIMetrics and WorkerMetrics those of the processes of
	// a running stack: their CPU.
	CombinedMetrics           string
	APIMetrics, WorkerMetrics []string
	// PostgresPID is the process ID of the PostgreSQL server when it runs
	// on this machine (its CPU; 0: not measured).
	PostgresPID int
}

// statsSettle is how long a snapshot waits for PostgreSQL's statistics
// to take in the last work: an idle server process reports its counts
// within 10 s (PostgreSQL 15).
const statsSettle = 11 * time.Second

// Read reads what the stack has spent so far, once PostgreSQL's
// statistics have taken in the work before.
func Read(ctx context.Context, src Sources) (Snapshot, error) {
	select {
	case <-ctx.Done():
		return Snapshot{}, ctx.Err()
	case <-time.After(statsSettle):
	}
	var s Snapshot
	var err error
	if s.DB, err = pg.ReadFootprint(ctx, src.DB); err != nil {
		return s, err
	}
	if s.Actions, err = readActions(ctx, src.TemporalMetrics, src.Namespace); err != nil {
		return s, err
	}
	if src.CombinedMetrics != "" {
		v, err := scrapeCPU(ctx, src.CombinedMetrics)
		if err != nil {
			return s, err
		}
		s.Combined = []float64{v}
	}
	for _, u := range src.APIMetrics {
		v, err := scrapeCPU(ctx, u)
		if err != nil {
			return s, err
		}
		s.API = append(s.API, v)
	}
	for _, u := range src.WorkerMetrics {
		v, err := scrapeCPU(ctx, u)
		if err != nil {
			return s, err
		}
		s.Worker = append(s.Worker, v)
	}
	if src.PostgresPID != 0 {
		v, err := treeCPUSeconds(src.PostgresPID)
		if err != nil {
			return s, fmt.Errorf("PostgreSQL's CPU: %w", err)
		}
		s.Postgres = &v
	}
	return s, nil
}

// PerInvite puts what was spent between before and after on m, per
// invite of its mix.
func PerInvite(m *Measurements, before, after Snapshot) {
	n := float64(max(m.Mix.Invites, 1))
	was := map[string]pg.TableFootprint{}
	for _, t := range before.DB.Tables {
		was[t.Table] = t
	}
	for _, t := range after.DB.Tables {
		b := was[t.Table]
		m.Tables = append(m.Tables, TableCost{Table: t.Table, Rows: float64(t.Rows-b.Rows) / n,
			TableBytes: float64(t.TableBytes-b.TableBytes) / n, IndexBytes: float64(t.IndexBytes-b.IndexBytes) / n})
	}
	a, b := after.DB, before.DB
	m.RowWrites = float64(a.Inserted+a.Updated+a.Deleted-b.Inserted-b.Updated-b.Deleted) / n
	m.WALBytes = float64(a.WALBytes-b.WALBytes) / n
	m.ActionsByType = map[string]float64{}
	for typ, v := range after.Actions {
		if d := v - before.Actions[typ]; d != 0 {
			m.ActionsByType[typ] = float64(d) / n
			m.Actions += float64(d) / n
		}
	}
	cpu := func(b, a []float64) *float64 {
		if len(a) == 0 {
			return nil
		}
		s := 0.0
		for i := range a {
			s += a[i] - b[i]
		}
		s /= n
		return &s
	}
	m.APICPU, m.WorkerCPU, m.CombinedCPU = cpu(before.API, after.API), cpu(before.Worker, after.Worker), cpu(before.Combined, after.Combined)
	if before.Postgres != nil && after.Postgres != nil {
		s := (*after.Postgres - *before.Postgres) / n
		m.PostgresCPU = &s
	}
}

// actionLine is one series of the `action` metric in the Prometheus text
// format: action{action_type="…",namespace="…"} 12.
var (
	actionLine  = regexp.MustCompile(`^action\{([^}]*)\} (\S+)`)
	actionLabel = regexp.MustCompile(`(\w+)="([^"]*)"`)
)

// ParseActions reads the series of the `action` metric of namespace from
// a Prometheus text exposition.
func ParseActions(r io.Reader, namespace string) (map[string]int64, error) {
	out := map[string]int64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		m := actionLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		labels := map[string]string{}
		for _, l := range actionLabel.FindAllStringSubmatch(m[1], -1) {
			labels[l[1]] = l[2]
		}
		if labels["namespace"] != namespace {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return nil, fmt.Errorf("action metric: %q: %w", sc.Text(), err)
		}
		out[labels["action_type"]] += int64(v)
	}
	return out, sc.Err()
}

// readActions reads the `action` metric of namespace from a Temporal
// server's (or dev's) /metrics.
func readActions(ctx context.Context, metricsURL, namespace string) (map[string]int64, error) {
	body, err := scrape(ctx, metricsURL)
	if err != nil {
		return nil, err
	}
	return ParseActions(bytes.NewReader(body), namespace)
}

// scrapeCPU reads a process's process_cpu_seconds_total from its
// /metrics.
func scrapeCPU(ctx context.Context, metricsURL string) (float64, error) {
	body, err := scrape(ctx, metricsURL)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_cpu_seconds_total "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("%s serves no process_cpu_seconds_total", metricsURL)
}

func scrape(ctx context.Context, metricsURL string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", metricsURL, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read %s: %s", metricsURL, res.Status)
	}
	return io.ReadAll(res.Body)
}

// Revision is the VCS revision the binary was built from, "" when it
// does not say.
func Revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	rev := settings["vcs.revision"]
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && settings["vcs.modified"] == "true" {
		rev += " with uncommitted changes"
	}
	return rev
}

// LoadWords says what the machine's load average was at the start and
// the end of the run.
func LoadWords(start, end float64) string {
	if start < 0 || end < 0 {
		return "The machine's load was not read."
	}
	return fmt.Sprintf("The machine's load average (1 minute) was %.1f at the start of the measured run and %.1f at its end, on %d cores.",
		start, end, runtime.NumCPU())
}
