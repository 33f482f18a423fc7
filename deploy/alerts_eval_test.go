package deploy_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// alertRule returns the alert of deploy/alerts.yml named name.
func alertRule(t *testing.T, name string) rulefmt.RuleNode {
	t.Helper()
	groups, errs := rulefmt.ParseFile(filepath.Join(repoRoot, "deploy", "alerts.yml"), false)
	require.Empty(t, errs)
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert.Value == name {
				return r
			}
		}
	}
	t.Fatalf("deploy/alerts.yml has no alert %s", name)
	return rulefmt.RuleNode{}
}

// loadSeries holds series written as promtool's rule tests write them,
// one a line ("up{job=\"touchpoint-api\"} 1x30"), a sample a minute from
// time 0, for the PromQL engine to query.
func loadSeries(t *testing.T, load string) storage.Queryable {
	t.Helper()
	var all []storage.Series
	for _, line := range strings.Split(strings.TrimSpace(load), "\n") {
		metric, values, err := parser.ParseSeriesDesc(line)
		require.NoError(t, err, line)
		var samples []chunks.Sample
		for i, v := range values {
			if !v.Omitted {
				samples = append(samples, floatSample{t: (time.Duration(i) * time.Minute).Milliseconds(), f: v.Value})
			}
		}
		all = append(all, storage.NewListSeries(metric, samples))
	}
	return &storage.MockQueryable{MockQuerier: &storage.MockQuerier{
		SelectMockFunction: func(_ bool, _ *storage.SelectHints, matchers ...*labels.Matcher) storage.SeriesSet {
			var match []storage.Series
			for _, s := range all {
				if matchesAll(s.Labels(), matchers) {
					match = append(match, s)
				}
			}
			slices.SortFunc(match, func(a, b storage.Series) int { return labels.Compare(a.Labels(), b.Labels()) })
			return &seriesList{series: match, i: -1}
		},
	}}
}

func matchesAll(lset labels.Labels, matchers []*labels.Matcher) bool {
	for _, m := range matchers {
		if !m.Matches(lset.Get(m.Name)) {
			return false
		}
	}
	return true
}

// seriesList is a storage.SeriesSet over a slice.
type seriesList struct {
	series []storage.Series
	i      int
}

func (l *seriesList) Next() bool                        { l.i++; return l.i < len(l.series) }
func (l *seriesList) At() storage.Series                { return l.series[l.i] }
func (l *seriesList) Err() error                        { return nil }
func (l *seriesList) Warnings() annotations.Annotations { return nil }

// floatSample is one float sample of a series.
type floatSample struct {
	t int64
	f float64
}

func (s floatSample) T() int64                      { return s.t }
func (s floatSample) F() float64                    { return s.f }
func (s floatSample) H() *histogram.Histogram       { return nil }
func (s floatSample) FH() *histogram.FloatHistogram { return nil }
func (s floatSample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s floatSample) Copy() chunks.Sample           { return s }

// alertState is what Prometheus' rule manager makes of an alert.
type alertState string

const (
	inactive alertState = "inactive" // the expression returns nothing
	pending  alertState = "pending"  // it does, for less than the alert's `for`
	firing   alertState = "firing"   // it has, at every evaluation for its `for`
)

// alertStateAfter evaluates the alert named name as Prometheus' rule
// manager does — every 15 s, firing once one series has been returned at
// every evaluation for the alert's `for` — over the series of load
// (see loadSeries), and
// returns its state after `minutes` minutes.
func alertStateAfter(t *testing.T, name, load string, minutes int) alertState {
	t.Helper()
	node := alertRule(t, name)
	series := loadSeries(t, load)
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	t.Cleanup(func() { _ = engine.Close() })

	const interval = 15 * time.Second
	end := time.Unix(0, 0).UTC().Add(time.Duration(minutes) * time.Minute)
	hold := time.Duration(node.For)
	start := end.Add(-hold)
	if start.Before(time.Unix(0, 0)) {
		start = time.Unix(0, 0).UTC()
	}
	q, err := engine.NewRangeQuery(context.Background(), series, nil, node.Expr.Value, start, end, interval)
	require.NoError(t, err)
	defer q.Close()
	res := q.Exec(context.Background())
	require.NoError(t, res.Err, name)
	matrix, err := res.Matrix()
	require.NoError(t, err, name)

	steps := int(end.Sub(start)/interval) + 1
	state := inactive
	for _, series := range matrix {
		last := series.Floats[len(series.Floats)-1]
		if last.T != end.UnixMilli() {
			continue // not returned at the last evaluation
		}
		state = pending
		if len(series.Floats) == steps && end.Sub(start) >= hold {
			return firing // returned at every evaluation of the whole `for`
		}
	}
	return state
}

// TestAlertNoWorkersFires: with only the API's (and the issuer's) series
// in Prometheus — every worker gone from discovery — TouchpointNoWorkers
// fires, although the API keeps reporting every invite gauge; a worker that
// is up silences it, and workers that are all down fire it too.
func TestAlertNoWorkersFires(t *testing.T) {
	t.Parallel()
	const apiOnly = `
up{job="touchpoint-api", instance="api-1:9464"} 1x30
up{job="touchpoint-auth", instance="auth-1:9464"} 1x30
touchpoint_outbox_pending{job="touchpoint-api", instance="api-1:9464"} 0x30
touchpoint_outbox_oldest_pending_seconds{job="touchpoint-api", instance="api-1:9464"} 0x30
touchpoint_invites_overdue{job="touchpoint-api", instance="api-1:9464"} 0x30
`
	for _, tc := range []struct {
		name   string
		series string
		want   alertState
	}{
		{"only API series", apiOnly, firing},
		{"every worker down", apiOnly + `up{job="touchpoint-worker", instance="worker-1:8082"} 0x30
up{job="touchpoint-worker", instance="worker-2:8082"} 0x30
`, firing},
		{"one worker of two up", apiOnly + `up{job="touchpoint-worker", instance="worker-1:8082"} 0x30
up{job="touchpoint-worker", instance="worker-2:8082"} 1x30
`, inactive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, alertStateAfter(t, "TouchpointNoWorkers", tc.series, 30))
		})
	}

	// Not before its `for`: a gap shorter than that does not page.
	assert.Equal(t, pending, alertStateAfter(t, "TouchpointNoWorkers", apiOnly, 3))
	// The other alerts see nothing wrong in the same series: this one is
	// the only page.
	for _, other := range []string{"TouchpointInvitesOverdue", "TouchpointTargetDown", "TouchpointOutboxBacklogOld"} {
		assert.Equal(t, inactive, alertStateAfter(t, other, apiOnly, 30), other)
	}
}

// TestAlertNoWorkersWatchesTheWorkerJob: the alert's job is the job that
// scrapes the workers in deploy/prometheus.yml, and its runbook names the
// worker's listen address.
func TestAlertNoWorkersWatchesTheWorkerJob(t *testing.T) {
	t.Parallel()
	node := alertRule(t, "TouchpointNoWorkers")
	expr, err := parser.ParseExpr(node.Expr.Value)
	require.NoError(t, err)
	var jobs []string
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			for _, m := range vs.LabelMatchers {
				if m.Name == "job" {
					jobs = append(jobs, m.Value)
				}
			}
		}
		return nil
	})
	var workerJobs []string
	for _, sc := range loadPrometheusConfig(t).ScrapeConfigs {
		for _, d := range sc.DNSConfigs {
			if slices.Contains(d.Names, "worker") {
				workerJobs = append(workerJobs, sc.JobName)
			}
		}
	}
	require.Len(t, workerJobs, 1, "one scrape job finds the workers")
	assert.Equal(t, workerJobs, jobs)
	for _, alert := range []string{"TouchpointNoWorkers", "TouchpointTargetDown", "TouchpointInvitesOverdue"} {
		assert.Contains(t, alertRule(t, alert).Annotations["runbook"], "TOUCHPOINT_WORKER_ADDR", alert)
	}
}

// TestAlertComplaintRate: TouchpointComplaintRate fires for the account
// whose complaints of the last 24 hours pass 0.3% of its mail, whatever
// the other accounts do and however many API replicas report it, and not
// at 0.3% or below, nor on a handful of messages.
func TestAlertComplaintRate(t *testing.T) {
	t.Parallel()
	// series is one account's gauges as two API replicas report them.
	series := func(account string, sent, complaints int) string {
		var b strings.Builder
		for _, api := range []string{"api-1:9464", "api-2:9464"} {
			fmt.Fprintf(&b, "touchpoint_mail_sent_24h{job=\"touchpoint-api\", instance=%q, account=%q} %dx40\n", api, account, sent)
			fmt.Fprintf(&b, "touchpoint_mail_complaints_24h{job=\"touchpoint-api\", instance=%q, account=%q} %dx40\n", api, account, complaints)
		}
		return b.String()
	}
	quiet := series("acc-quiet", 5000, 2) // 0.04%
	for _, tc := range []struct {
		name   string
		series string
		want   alertState
	}{
		{"4 of 1000 (0.4%)", quiet + series("acc-loud", 1000, 4), firing},
		{"31 of 10000 (0.31%)", quiet + series("acc-loud", 10000, 31), firing},
		{"3 of 1000 (0.3%)", quiet + series("acc-loud", 1000, 3), inactive},
		{"2 of 1000 (0.2%)", quiet + series("acc-loud", 1000, 2), inactive},
		{"1 of 50: too few messages", quiet + series("acc-loud", 50, 1), inactive},
		{"none sent", quiet + series("acc-loud", 0, 1), inactive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, alertStateAfter(t, "TouchpointComplaintRate", tc.series, 40))
		})
	}
	// Not before its `for`.
	assert.Equal(t, pending, alertStateAfter(t, "TouchpointComplaintRate", series("acc-loud", 1000, 4), 10))
}

// TestAlertPartitionsRunningOut: fewer than two months ready ahead for an
// hour opens a ticket; three (what housekeeping keeps) or an unreachable
// database (-1, which TouchpointDatabaseUnreachable reports) do not.
func TestAlertPartitionsRunningOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		series  string
		minutes int
		want    alertState
	}{
		{"one month ready", `touchpoint_partitions_ahead{instance="api-1:9464"} 1x90`, 90, firing},
		{"none ready", `touchpoint_partitions_ahead{instance="api-1:9464"} 0x90`, 90, firing},
		{"for less than an hour", `touchpoint_partitions_ahead{instance="api-1:9464"} 1x90`, 30, pending},
		{"three ready", `touchpoint_partitions_ahead{instance="api-1:9464"} 3x90`, 90, inactive},
		{"two ready", `touchpoint_partitions_ahead{instance="api-1:9464"} 2x90`, 90, inactive},
		{"database unreachable", `touchpoint_partitions_ahead{instance="api-1:9464"} -1x90`, 90, inactive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, alertStateAfter(t, "TouchpointPartitionsRunningOut", tc.series, tc.minutes))
		})
	}
}
