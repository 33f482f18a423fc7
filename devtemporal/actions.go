package devtemporal

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
)

// Action is one series of the server's `action` metric: the operations
// Temporal Cloud bills as Actions (workflow starts, timers, activities and
// their retries, search attribute upserts, signals, queries, one per
// workflow task's batch of markers…), counted by the server itself.
type Action struct {
	Namespace string
	// Type is the metric's action_type: "grpc_StartWorkflowExecution",
	// "command_StartTimer", "command_BatchMarkers", …
	Type string
}

// Actions returns the server's `action` metric so far, by namespace and
// action type.
func (s *Server) Actions() map[Action]int64 {
	return s.actions.snapshot()
}

// ActionsCollector exports Actions as the Prometheus counter `action`
// with the labels namespace and action_type, as a Temporal server with
// Prometheus metrics names it.
func (s *Server) ActionsCollector() prometheus.Collector {
	return actionsCollector{s.actions}
}

// actionCounts holds the counts of the `action` metric.
type actionCounts struct {
	mu sync.Mutex
	n  map[Action]int64
}

func newActionCounts() *actionCounts { return &actionCounts{n: map[Action]int64{}} }

func (c *actionCounts) add(v int64, tags ...[]metrics.Tag) {
	var a Action
	for _, ts := range tags {
		for _, t := range ts {
			switch t.Key {
			case "namespace":
				a.Namespace = t.Value
			case "action_type":
				a.Type = t.Value
			}
		}
	}
	c.mu.Lock()
	c.n[a] += v
	c.mu.Unlock()
}

func (c *actionCounts) snapshot() map[Action]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[Action]int64, len(c.n))
	for a, v := range c.n {
		out[a] = v
	}
	return out
}

// actionHandler is the embedded server's metrics handler: it keeps the
// `action` counter and drops every other metric, which a dev server has
// no use for.
type actionHandler struct {
	counts *actionCounts
	tags   []metrics.Tag // only those the action counter reads
}

func (h actionHandler) WithTags(tags ...metrics.Tag) metrics.Handler {
	kept := slices.Clip(h.tags)
	for _, t := range tags {
		if t.Key == "namespace" || t.Key == "action_type" {
			kept = append(kept, t)
		}
	}
	return actionHandler{counts: h.counts, tags: kept}
}

func (h actionHandler) Counter(name string) metrics.CounterIface {
	if name != metrics.ActionCounter.Name() {
		return metrics.NoopCounterMetricFunc
	}
	return metrics.CounterFunc(func(v int64, tags ...metrics.Tag) { h.counts.add(v, h.tags, tags) })
}

func (actionHandler) Gauge(string) metrics.GaugeIface { return metrics.NoopGaugeMetricFunc }
func (actionHandler) Timer(string) metrics.TimerIface { return metrics.NoopTimerMetricFunc }
func (actionHandler) Histogram(string, metrics.MetricUnit) metrics.HistogramIface {
	return metrics.NoopHistogramMetricFunc
}
func (actionHandler) Stop(log.Logger) {}
func (h actionHandler) StartBatch(string) metrics.BatchHandler {
	return actionBatch{h}
}

// actionBatch emits a batch's metrics one by one.
type actionBatch struct{ actionHandler }

func (actionBatch) Close() error { return nil }

var actionDesc = prometheus.NewDesc("action",
	"Temporal Actions counted by the embedded Temporal server (its `action` metric), by namespace and action type.",
	[]string{"namespace", "action_type"}, nil)

type actionsCollector struct{ counts *actionCounts }

func (actionsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- actionDesc }

func (c actionsCollector) Collect(ch chan<- prometheus.Metric) {
	for a, v := range c.counts.snapshot() {
		ch <- prometheus.MustNewConstMetric(actionDesc, prometheus.CounterValue, float64(v), a.Namespace, a.Type)
	}
}
