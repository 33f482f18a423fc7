package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rules of Grafana's dashboard linter (github.com/grafana/dashboard-linter),
// run in strict mode — a warning fails as an error does. The linter's
// binary cannot be fetched here, so its rules for a Prometheus dashboard
// are written down below, each under the linter's name for it.

// lintedDashboard is what the rules read of a dashboard.
type lintedDashboard struct {
	Title      string `json:"title"`
	Editable   bool   `json:"editable"`
	Templating struct {
		List []lintedVariable `json:"list"`
	} `json:"templating"`
	Panels []lintedPanel `json:"panels"`
}

type lintedVariable struct {
	Name       string             `json:"name"`
	Label      string             `json:"label"`
	Type       string             `json:"type"`
	Query      string             `json:"query"`
	Datasource *grafanaDatasource `json:"datasource"`
	Multi      bool               `json:"multi"`
	AllValue   string             `json:"allValue"`
	Refresh    int                `json:"refresh"`
}

type lintedPanel struct {
	Type        string             `json:"type"`
	Title       string             `json:"title"`
	Description string             `json:"description"`
	Datasource  *grafanaDatasource `json:"datasource"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []lintedPanel `json:"panels"` // a collapsed row's
}

// rateIntervalStandIn is what $__rate_interval becomes for parsing: a
// range no one writes by hand, so a range of this length is the variable.
const rateIntervalStandIn = 13*time.Minute + 37*time.Second

var lintIntervals = strings.NewReplacer("$__rate_interval", "13m37s", "$__interval", "1m", "$__range", "1h")

// grafanaUnits are the Grafana unit ids a panel of this dashboard may use.
var grafanaUnits = map[string]bool{"none": true, "short": true, "percent": true, "percentunit": true, "s": true,
	"ms": true, "reqps": true, "ops": true, "bytes": true}

// labelValues is a query variable's label_values(selector, label).
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// lintDashboard returns every problem the linter would report, each
// prefixed with its rule's name.
func lintDashboard(d lintedDashboard) []string {
	var problems []string
	report := func(rule, format string, args ...any) {
		problems = append(problems, rule+": "+fmt.Sprintf(format, args...))
	}

	// uneditable-dashboard: provisioned dashboards are changed in the
	// repository, not in Grafana.
	if d.Editable {
		report("uneditable-dashboard", "the dashboard is editable")
	}

	// template-datasource-rule
	vars := map[string]lintedVariable{}
	var datasources []lintedVariable
	for _, v := range d.Templating.List {
		vars[v.Name] = v
		if v.Type == "datasource" {
			datasources = append(datasources, v)
		}
	}
	if len(datasources) != 1 {
		report("template-datasource-rule", "want one datasource variable, have %d", len(datasources))
	}
	for _, v := range datasources {
		if v.Query != "prometheus" {
			report("template-datasource-rule", "datasource variable %q is of %q, not prometheus", v.Name, v.Query)
		}
		if v.Name != "datasource" && v.Name != "prometheus_datasource" {
			report("template-datasource-rule", "datasource variable named %q, not datasource", v.Name)
		}
		if v.Label != "Data source" && v.Label != "Prometheus data source" {
			report("template-datasource-rule", "datasource variable labelled %q, not \"Data source\"", v.Name)
		}
	}
	templated := func(ds *grafanaDatasource) bool {
		return ds != nil && (ds.UID == "$datasource" || ds.UID == "${datasource}")
	}

	// template-job-rule, template-instance-rule
	for _, name := range []string{"job", "instance"} {
		rule := "template-" + name + "-rule"
		v, ok := vars[name]
		if !ok {
			report(rule, "no %s variable", name)
			continue
		}
		if !templated(v.Datasource) {
			report(rule, "the %s variable does not query $datasource", name)
		}
		if v.Type != "query" {
			report(rule, "the %s variable is of type %q, not a query", name, v.Type)
		}
		if want := strings.ToUpper(name[:1]) + name[1:]; v.Label != want {
			report(rule, "the %s variable is labelled %q, not %q", name, v.Label, want)
		}
		if !v.Multi {
			report(rule, "the %s variable is not a multi-select", name)
		}
		if v.AllValue != ".+" {
			report(rule, "the %s variable's allValue is %q, not .+", name, v.AllValue)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		// template-label-promql-rule
		m := labelValues.FindStringSubmatch(v.Query)
		if m == nil {
			report("template-label-promql-rule", "variable %q: %q is not label_values(selector, label)", v.Name, v.Query)
		} else if _, err := parser.ParseExpr(m[1]); err != nil {
			report("template-label-promql-rule", "variable %q: %v", v.Name, err)
		}
		// template-on-time-change-reload-rule
		if v.Refresh != 2 {
			report("template-on-time-change-reload-rule", "variable %q is not refreshed on a time range change", v.Name)
		}
	}

	var panels func([]lintedPanel)
	panels = func(ps []lintedPanel) {
		for _, p := range ps {
			if p.Type == "row" {
				panels(p.Panels)
				continue
			}
			// panel-datasource-rule
			if !templated(p.Datasource) {
				report("panel-datasource-rule", "panel %q does not use $datasource", p.Title)
			}
			// panel-title-description-rule
			if p.Title == "" || p.Description == "" {
				report("panel-title-description-rule", "panel %q has no title or no description", p.Title)
			}
			// panel-units-rule
			if !grafanaUnits[p.FieldConfig.Defaults.Unit] {
				report("panel-units-rule", "panel %q has no or an unknown unit %q", p.Title, p.FieldConfig.Defaults.Unit)
			}
			// panel-no-targets-rule
			if len(p.Targets) == 0 {
				report("panel-no-targets-rule", "panel %q has no queries", p.Title)
			}
			for _, t := range p.Targets {
				lintQuery(p.Title, t.RefID, t.Expr, report)
			}
		}
	}
	panels(d.Panels)
	return problems
}

// lintQuery applies the rules of one PromQL query.
func lintQuery(panel, ref, query string, report func(rule, format string, args ...any)) {
	at := fmt.Sprintf("panel %q query %s", panel, ref)
	// target-promql-rule
	expr, err := parser.ParseExpr(lintIntervals.Replace(query))
	if err != nil {
		report("target-promql-rule", "%s: %v", at, err)
		return
	}
	// target-job-rule, target-instance-rule
	for _, sel := range parser.ExtractSelectors(expr) {
		for _, label := range []string{"job", "instance"} {
			found := false
			for _, m := range sel {
				found = found || (m.Name == label && m.Type == labels.MatchRegexp && m.Value == "$"+label)
			}
			if !found {
				report("target-"+label+"-rule", "%s: a selector without %s=~\"$%s\": %s", at, label, label, query)
			}
		}
	}
	_ = parser.Walk(inspect(func(node parser.Node, path []parser.Node) {
		switch n := node.(type) {
		case *parser.MatrixSelector:
			// target-rate-interval-rule: a range under rate or irate is
			// $__rate_interval.
			if len(path) > 0 {
				if call, ok := path[len(path)-1].(*parser.Call); ok && (call.Func.Name == "rate" || call.Func.Name == "irate") &&
					n.Range != rateIntervalStandIn {
					report("target-rate-interval-rule", "%s: %s(…[%s]) should use $__rate_interval", at, call.Func.Name, n.Range)
				}
			}
		case *parser.VectorSelector:
			// target-counter-agg-rule: a counter (…_total) goes through
			// rate, irate or increase.
			if !strings.HasSuffix(n.Name, "_total") {
				return
			}
			ok := len(path) >= 2
			if ok {
				_, ranged := path[len(path)-1].(*parser.MatrixSelector)
				call, called := path[len(path)-2].(*parser.Call)
				ok = ranged && called && (call.Func.Name == "rate" || call.Func.Name == "irate" || call.Func.Name == "increase")
			}
			if !ok {
				report("target-counter-agg-rule", "%s: counter %s is not aggregated with rate, irate or increase", at, n.Name)
			}
		}
	}), expr, nil)
}

// inspect is a parser.Visitor calling f on every node with its ancestors.
type inspect func(parser.Node, []parser.Node)

func (f inspect) Visit(node parser.Node, path []parser.Node) (parser.Visitor, error) {
	if node != nil {
		f(node, path)
	}
	return f, nil
}

func readLintedDashboard(t *testing.T) lintedDashboard {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "grafana", "touchpoint.json"))
	require.NoError(t, err)
	var d lintedDashboard
	require.NoError(t, json.Unmarshal(raw, &d))
	return d
}

// TestGrafanaDashboardPassesTheLinter: the dashboard passes every rule of
// Grafana's dashboard linter in strict mode: job and instance variables
// on every query, $__rate_interval, counters through rate, not editable.
func TestGrafanaDashboardPassesTheLinter(t *testing.T) {
	t.Parallel()
	assert.Empty(t, lintDashboard(readLintedDashboard(t)))
}

// TestGrafanaLintRules: each rule reports a dashboard that breaks it.
func TestGrafanaLintRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule   string
		breaks func(*lintedDashboard)
	}{
		{"uneditable-dashboard", func(d *lintedDashboard) { d.Editable = true }},
		{"template-datasource-rule", func(d *lintedDashboard) { d.Templating.List[0].Label = "Prometheus" }},
		{"template-job-rule", func(d *lintedDashboard) {
			for i := range d.Templating.List {
				if d.Templating.List[i].Name == "job" {
					d.Templating.List[i].AllValue = ""
				}
			}
		}},
		{"template-instance-rule", func(d *lintedDashboard) {
			for i := range d.Templating.List {
				if d.Templating.List[i].Name == "instance" {
					d.Templating.List[i].Multi = false
				}
			}
		}},
		{"template-on-time-change-reload-rule", func(d *lintedDashboard) { d.Templating.List[1].Refresh = 1 }},
		{"template-label-promql-rule", func(d *lintedDashboard) { d.Templating.List[1].Query = "label_values(up{, job)" }},
		{"panel-datasource-rule", func(d *lintedDashboard) { firstPanel(d).Datasource = &grafanaDatasource{Type: "prometheus", UID: "P1"} }},
		{"panel-title-description-rule", func(d *lintedDashboard) { firstPanel(d).Description = "" }},
		{"panel-units-rule", func(d *lintedDashboard) { firstPanel(d).FieldConfig.Defaults.Unit = "" }},
		{"panel-no-targets-rule", func(d *lintedDashboard) { firstPanel(d).Targets = nil }},
		{"target-promql-rule", func(d *lintedDashboard) { firstPanel(d).Targets[0].Expr = "sum(rate(" }},
		{"target-job-rule", func(d *lintedDashboard) {
			firstPanel(d).Targets[0].Expr = `max(touchpoint_outbox_pending{instance=~"$instance"})`
		}},
		{"target-instance-rule", func(d *lintedDashboard) {
			firstPanel(d).Targets[0].Expr = `max(touchpoint_outbox_pending{job=~"$job", instance="x"})`
		}},
		{"target-rate-interval-rule", func(d *lintedDashboard) {
			firstPanel(d).Targets[0].Expr = `sum(rate(touchpoint_events_accepted_total{job=~"$job", instance=~"$instance"}[5m]))`
		}},
		{"target-counter-agg-rule", func(d *lintedDashboard) {
			firstPanel(d).Targets[0].Expr = `sum(touchpoint_events_accepted_total{job=~"$job", instance=~"$instance"})`
		}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			d := readLintedDashboard(t)
			tc.breaks(&d)
			problems := lintDashboard(d)
			require.NotEmpty(t, problems)
			for _, p := range problems {
				assert.True(t, strings.HasPrefix(p, tc.rule+": "), "only %s breaks: %s", tc.rule, p)
			}
		})
	}
}

// firstPanel is the first panel that queries something.
func firstPanel(d *lintedDashboard) *lintedPanel {
	var find func([]lintedPanel) *lintedPanel
	find = func(ps []lintedPanel) *lintedPanel {
		for i := range ps {
			if ps[i].Type == "row" {
				if p := find(ps[i].Panels); p != nil {
					return p
				}
				continue
			}
			return &ps[i]
		}
		return nil
	}
	return find(d.Panels)
}
