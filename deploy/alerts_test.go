package deploy_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store/partitiondb"
	"github.com/touchpoint/touchpoint/workflows"
)

// exportedMetrics are the series names a Touchpoint process serves: what
// a metrics.Set actually exposes (with the outbox, overdue and webhook
// gauges registered, as the API and the worker do, and every counter
// counted once), the invite and reminder workflows' counters (exported by
// the worker through the Temporal SDK, without a _total suffix), and
// Prometheus' own per-target `up`.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New()
	m.WatchOutbox(func(context.Context) (int, time.Duration, error) { return 0, 0, nil })
	m.WatchOverdue(func(context.Context, time.Duration) (int, error) { return 0, nil })
	m.WatchWebhooks(func(context.Context) (int, time.Duration, error) { return 0, 0, nil })
	m.WatchReplica(func() (time.Duration, bool, bool) { return 0, true, true })
	m.WatchPartitions(func(context.Context) (int, error) { return partitiondb.Ahead, nil })
	m.WatchMailLastDay(func(context.Context) ([]metrics.AccountMail, error) {
		return []metrics.AccountMail{{Account: "acc-1", Sent: 1, Complaints: 1}}, nil
	})
	// Vectors are listed once they have counted: count one of each.
	m.Request("api", "/events", http.MethodPost, http.StatusAccepted, time.Millisecond)
	m.EventAccepted()
	m.WorkflowStart("start", "started")
	m.TokenVerification("ok")
	m.QuotaExceeded("daily_sends")
	m.Review(5)
	m.WebhookDelivery(metrics.WebhookSucceeded)
	m.ReplicaRead("replica")
	m.MailReport("ses", "delivered")
	m.MailReportUnknown("ses")
	m.MailEventRefused("ses", metrics.MailRefusedSignature)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)

	names := map[string]bool{"up": true, workflows.InvitesMetric: true, workflows.RemindersMetric: true}
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		// "# TYPE name kind": histograms and summaries also serve name_bucket,
		// name_sum and name_count.
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
			continue
		}
		names[f[2]] = true
		if f[3] == "histogram" || f[3] == "summary" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[f[2]+s] = true
			}
		}
	}
	require.NoError(t, sc.Err())
	require.True(t, names["touchpoint_outbox_oldest_pending_seconds"], "sanity: the scrape lists the outbox gauges")
	require.True(t, names["touchpoint_invites_overdue"], "sanity: the scrape lists the overdue gauge")
	return names
}

// TestAlertRules: deploy/alerts.yml is a valid Prometheus rule file (parsed
// and validated by Prometheus' own rule parser, as promtool does), has the
// alerts ops rely on, tells on-call what to do, and watches only metrics
// Touchpoint serves.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	groups, errs := rulefmt.ParseFile(filepath.Join(repoRoot, "deploy", "alerts.yml"), false)
	require.Empty(t, errs, "alerts.yml must load as Prometheus loads it")

	exported := exportedMetrics(t)
	alerts := map[string]rulefmt.Rule{}
	for _, g := range groups.Groups {
		for _, node := range g.Rules {
			require.NotEmpty(t, node.Alert.Value, "group %s holds alerts only", g.Name)
			name := node.Alert.Value
			_, dup := alerts[name]
			require.False(t, dup, "alert %s is defined twice", name)
			alerts[name] = rulefmt.Rule{Alert: name, Expr: node.Expr.Value, For: node.For, Labels: node.Labels, Annotations: node.Annotations}

			expr, err := parser.ParseExpr(node.Expr.Value)
			require.NoError(t, err, name)
			for _, metric := range metricNames(expr) {
				assert.True(t, exported[metric], "alert %s uses %s, which Touchpoint does not export", name, metric)
			}
			for _, key := range []string{"summary", "description", "runbook"} {
				assert.NotEmpty(t, strings.TrimSpace(node.Annotations[key]), "alert %s needs annotation %q", name, key)
			}
			assert.Contains(t, []string{"page", "ticket"}, node.Labels["severity"], "alert %s: severity", name)
		}
	}

	// The alerts the product promises, with their thresholds.
	want := []struct {
		alert  string
		metric string
		expr   string // a fragment of the expression
		for_   time.Duration
	}{
		{"TouchpointInvitesOverdue", "touchpoint_invites_overdue", "> 0", 10 * time.Minute},
		{"TouchpointOutboxBacklogOld", "touchpoint_outbox_oldest_pending_seconds", "> 300", 5 * time.Minute},
		{"TouchpointInviteFailureRate", workflows.InvitesMetric, `status="failed"`, 5 * time.Minute},
		{"TouchpointWebhookBacklogOld", "touchpoint_webhook_oldest_pending_seconds", "> 900", 10 * time.Minute},
		{"TouchpointDatabaseUnreachable", "touchpoint_outbox_pending", "< 0", 2 * time.Minute},
		{"TouchpointReadReplicaFallback", "touchpoint_db_replica_fallback", "== 1", 10 * time.Minute},
		{"TouchpointPartitionsRunningOut", "touchpoint_partitions_ahead", "< " + strconv.Itoa(partitiondb.AlertBelow), time.Hour},
		// The console measures an account's mail against the same rate.
		{"TouchpointComplaintRate", "touchpoint_mail_complaints_24h", "> " + strconv.FormatFloat(stats.ComplaintRateAlert, 'f', -1, 64), 15 * time.Minute},
	}
	for _, w := range want {
		r, ok := alerts[w.alert]
		if !assert.True(t, ok, "missing alert %s", w.alert) {
			continue
		}
		expr, err := parser.ParseExpr(r.Expr)
		require.NoError(t, err)
		assert.Contains(t, metricNames(expr), w.metric, w.alert)
		assert.Contains(t, r.Expr, w.expr, w.alert)
		assert.Equal(t, w.for_, time.Duration(r.For), w.alert)
	}
	// The failure rate is failed over all ended invites over 15 minutes.
	rate := alerts["TouchpointInviteFailureRate"].Expr
	assert.Contains(t, rate, `rate(touchpoint_invites{status="failed"}[15m])`)
	assert.Contains(t, rate, `rate(touchpoint_invites[15m])`)
	assert.Contains(t, rate, `> 0.05`)
}

// metricNames lists the metric names an expression selects.
func metricNames(expr parser.Expr) []string {
	var names []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == "__name__" {
				name = m.Value
			}
		}
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
		return nil
	})
	return names
}
