package deploy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// grafanaDashboard is what these tests read of a Grafana dashboard model.
type grafanaDashboard struct {
	Title         string         `json:"title"`
	UID           string         `json:"uid"`
	SchemaVersion int            `json:"schemaVersion"`
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query string `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type grafanaPanel struct {
	ID         int                      `json:"id"`
	Type       string                   `json:"type"`
	Title      string                   `json:"title"`
	Datasource *grafanaDatasource       `json:"datasource"`
	GridPos    struct{ H, W, X, Y int } `json:"gridPos"`
	Targets    []struct {
		RefID      string             `json:"refId"`
		Expr       string             `json:"expr"`
		Datasource *grafanaDatasource `json:"datasource"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // a collapsed row's
}

type grafanaDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// grafanaIntervals stand in for the interval variables Grafana fills in
// before it sends a query, so that the query parses as PromQL.
var grafanaIntervals = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// TestGrafanaDashboard: deploy/grafana/touchpoint.json loads as a Grafana
// dashboard — a schema version, panels placed on the grid, every query on
// the Prometheus chosen by its datasource variable — and queries only
// metrics Touchpoint's processes export, covering what ops watch.
func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "grafana", "touchpoint.json"))
	require.NoError(t, err)
	var d grafanaDashboard
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	require.NoError(t, dec.Decode(&d), "the dashboard is one JSON object")
	assert.False(t, dec.More(), "nothing after the dashboard")

	assert.NotEmpty(t, d.Title)
	assert.NotEmpty(t, d.UID, "a fixed uid: importing again replaces the dashboard instead of adding a copy")
	assert.GreaterOrEqual(t, d.SchemaVersion, 36, "a schema version Grafana 10 and later load without migrating panels")

	var dsVar string
	for _, v := range d.Templating.List {
		if v.Type == "datasource" && v.Query == "prometheus" {
			dsVar = "${" + v.Name + "}"
		}
	}
	require.NotEmpty(t, dsVar, "a datasource variable of type prometheus, so the dashboard imports onto any Prometheus")

	exported := exportedMetrics(t)
	queried := map[string]bool{}
	ids := map[int]bool{}
	var walk func([]grafanaPanel)
	walk = func(panels []grafanaPanel) {
		for _, p := range panels {
			assert.False(t, ids[p.ID], "panel id %d is used twice", p.ID)
			ids[p.ID] = true
			assert.NotEmpty(t, p.Title, "panel %d needs a title", p.ID)
			assert.Positive(t, p.GridPos.W, "panel %q: gridPos", p.Title)
			assert.Positive(t, p.GridPos.H, "panel %q: gridPos", p.Title)
			assert.LessOrEqual(t, p.GridPos.X+p.GridPos.W, 24, "panel %q runs off the 24-column grid", p.Title)
			if p.Type == "row" {
				assert.Empty(t, p.Targets, "row %q queries nothing", p.Title)
				walk(p.Panels)
				continue
			}
			assert.Contains(t, []string{"timeseries", "stat", "gauge", "bargauge", "table"}, p.Type, "panel %q", p.Title)
			require.NotNil(t, p.Datasource, "panel %q names its datasource", p.Title)
			assert.Equal(t, grafanaDatasource{Type: "prometheus", UID: dsVar}, *p.Datasource, "panel %q", p.Title)
			assert.NotEmpty(t, p.Targets, "panel %q shows something", p.Title)
			for _, q := range p.Targets {
				if q.Datasource != nil {
					assert.Equal(t, grafanaDatasource{Type: "prometheus", UID: dsVar}, *q.Datasource, "panel %q query %s", p.Title, q.RefID)
				}
				expr, err := parser.ParseExpr(grafanaIntervals.Replace(q.Expr))
				if !assert.NoError(t, err, "panel %q query %s: %s", p.Title, q.RefID, q.Expr) {
					continue
				}
				names := metricNames(expr)
				assert.NotEmpty(t, names, "panel %q query %s selects no metric", p.Title, q.RefID)
				for _, name := range names {
					queried[name] = true
					assert.True(t, exported[name], "panel %q queries %s, which Touchpoint does not export", p.Title, name)
				}
			}
		}
	}
	walk(d.Panels)

	// What ops look at first.
	for _, name := range []string{
		"touchpoint_events_accepted_total",         // accepts
		"touchpoint_outbox_pending",                // outbox backlog
		"touchpoint_outbox_oldest_pending_seconds", //
		"touchpoint_invites",                       // sends by outcome
		"touchpoint_invites_overdue",               // overdue invites
		"touchpoint_webhook_pending",               // webhook backlog
		"touchpoint_webhook_oldest_pending_seconds",
		"touchpoint_webhook_deliveries_total",
	} {
		assert.True(t, queried[name], "the dashboard shows %s", name)
	}
}
