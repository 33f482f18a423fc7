package deploy_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// prometheusConfig is what these tests read of deploy/prometheus.yml.
type prometheusConfig struct {
	RuleFiles     []string `yaml:"rule_files"`
	ScrapeConfigs []struct {
		JobName    string `yaml:"job_name"`
		DNSConfigs []struct {
			Names []string `yaml:"names"`
			Type  string   `yaml:"type"`
			Port  int      `yaml:"port"`
		} `yaml:"dns_sd_configs"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

func loadPrometheusConfig(t *testing.T) prometheusConfig {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "prometheus.yml"))
	require.NoError(t, err)
	var pc prometheusConfig
	require.NoError(t, yaml.Unmarshal(raw, &pc))
	return pc
}

// TestComposePrometheus: the compose stack's Prometheus loads the alert
// rules and scrapes every replica of the api, the issuer and the worker
// where they serve metrics, under job names the TouchpointTargetDown alert watches.
func TestComposePrometheus(t *testing.T) {
	t.Parallel()
	c := mustLoadCompose(t)
	prom := c.Services["prometheus"]
	assert.Contains(t, prom.Volumes, "./deploy/prometheus.yml:/etc/prometheus/prometheus.yml:ro")
	assert.Contains(t, prom.Volumes, "./deploy/alerts.yml:/etc/prometheus/alerts.yml:ro")

	pc := loadPrometheusConfig(t)
	// Relative rule files are read beside the configuration file: here
	// deploy/, in the container /etc/prometheus/.
	assert.Equal(t, []string{"alerts.yml"}, pc.RuleFiles)

	// The ports the processes serve metrics on.
	want := map[string]string{} // service → port
	for _, name := range []string{"api", "auth"} {
		cfg := loadConfig(t, c.Services[name])
		_, p, err := net.SplitHostPort(cfg.MetricsAddr)
		require.NoError(t, err, "%s serves metrics (TOUCHPOINT_METRICS_ADDR)", name)
		want[name] = p
	}
	worker := loadConfig(t, c.Services["worker"])
	_, workerPort, err := net.SplitHostPort(worker.WorkerAddr)
	require.NoError(t, err)
	want["worker"] = workerPort

	jobMatcher := targetDownJobMatcher(t)
	scraped := map[string]string{}
	for _, sc := range pc.ScrapeConfigs {
		for _, d := range sc.DNSConfigs {
			// Every replica: an A query for the service name returns them all.
			assert.Equal(t, "A", d.Type, sc.JobName)
			for _, name := range d.Names {
				require.Contains(t, c.Services, name, "job %s scrapes an unknown service", sc.JobName)
				scraped[name] = strconv.Itoa(d.Port)
				assert.True(t, jobMatcher.Matches(sc.JobName), "job %s must match TouchpointTargetDown's %s", sc.JobName, jobMatcher)
			}
		}
		for _, st := range sc.StaticConfigs {
			for _, target := range st.Targets {
				host, _, err := net.SplitHostPort(target)
				require.NoError(t, err)
				require.Contains(t, c.Services, host, "job %s scrapes an unknown service", sc.JobName)
			}
		}
	}
	for name, port := range want {
		assert.Equal(t, port, scraped[name], "Prometheus scrapes every %s replica on its metrics port", name)
	}
}

// targetDownJobMatcher is the job matcher of the TouchpointTargetDown alert.
func targetDownJobMatcher(t *testing.T) *labels.Matcher {
	t.Helper()
	groups, errs := rulefmt.ParseFile(filepath.Join(repoRoot, "deploy", "alerts.yml"), false)
	require.Empty(t, errs)
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert.Value != "TouchpointTargetDown" {
				continue
			}
			expr, err := parser.ParseExpr(r.Expr.Value)
			require.NoError(t, err)
			var m *labels.Matcher
			parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
				if vs, ok := node.(*parser.VectorSelector); ok {
					for _, lm := range vs.LabelMatchers {
						if lm.Name == "job" {
							m = lm
						}
					}
				}
				return nil
			})
			require.NotNil(t, m, "TouchpointTargetDown selects by job")
			return m
		}
	}
	t.Fatal("no TouchpointTargetDown alert")
	return nil
}

// TestPrometheusConfigWithPromtool has Prometheus' own tool check the
// configuration and the rule file it loads, when promtool is installed
// (Debian: prometheus). Without it only this check is skipped (failed
// under CI=true).
func TestPrometheusConfigWithPromtool(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		withoutValidator(t, "promtool is not installed (apt-get install prometheus)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, promtool, "check", "config", filepath.Join(repoRoot, "deploy", "prometheus.yml")).CombinedOutput()
	require.NoError(t, err, "promtool check config:\n%s", out)
	assert.True(t, strings.Contains(string(out), "1 rule files found"), "the alert rules are loaded:\n%s", out)
}
