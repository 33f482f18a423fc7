// Package metrics holds a process's Prometheus metrics: HTTP requests,
// accepted events, workflow starts, token checks, the outbox backlog and
// the overdue invites (read from the database at most every ReadEvery), and
// the Temporal SDK's metrics — its own and the invite workflow's
// touchpoint_invites_total by status and reason — all served by one
// /metrics handler. A nil *Set records nothing, so callers need no checks.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/touchpoint/touchpoint/internal/memo"
)

// Set is one process's metrics.
type Set struct {
	reg                *prometheus.Registry
	httpRequests       *prometheus.CounterVec
	httpDuration       *prometheus.HistogramVec
	eventsAccepted     prometheus.Counter
	workflowStarts     *prometheus.CounterVec
	tokenVerifications *prometheus.CounterVec
	reviews            *prometheus.CounterVec
	quotaExceeded      *prometheus.CounterVec
	webhookDeliveries  *prometheus.CounterVec
	mailReports        *prometheus.CounterVec
	mailUnknown        *prometheus.CounterVec
	mailRefusals       *prometheus.CounterVec
	replicaReads       *prometheus.CounterVec
}

// New makes a Set with the Go runtime and process collectors.
func New() *Set {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	s := &Set{
		reg: reg,
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "touchpoint_http_requests_total", Help: "HTTP requests by server, route template, method and status.",
		}, []string{"server", "route", "method", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "touchpoint_http_request_duration_seconds", Help: "HTTP request latency by server, route template and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"server", "route", "method"}),
		eventsAccepted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "touchpoint_events_accepted_total", Help: "Events accepted (202), not counting idempotent repeats.",
		}),
		workflowStarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "touchpoint_workflow_starts_total", Help: "Invite workflow starts by the outbox starter, by kind (start, retry) and result (started, existing, error, skipped).",
		}, []string{"kind", "result"}),
		tokenVerifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "touchpoint_token_verifications_total", Help: "Bearer token verifications by result (ok, invalid, unavailable).",
		}, []string{"result"}),
		reviews: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "touchpoint_reviews_total", Help: "Reviews stored (a changed review counts once), by rating.",
		}, []string{"rating"}),
		quotaExceeded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "touchpoint_quota_exceeded_total", Help: "Refusals by an account quota, by kind (daily_sends, recipient_daily_cap: an invite skipped; channels, event_types: a create answered 429).",
		}, []string{"kind"}),
		webhookDeliveries: newWebhookDeliveries(),
		replicaReads:      newReplicaReads(),
	}
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f(s.httpRequests)
	f(s.httpDuration)
	f(s.eventsAccepted)
	f(s.workflowStarts)
	f(s.tokenVerifications)
	f(s.reviews)
	f(s.quotaExceeded)
	f(s.webhookDeliveries)
	f(s.replicaReads)
	s.mailReports, s.mailUnknown, s.mailRefusals = newMailCounters()
	f(s.mailReports)
	f(s.mailUnknown)
	f(s.mailRefusals)
	return s
}

// Review counts a new review with its rating.
func (s *Set) Review(rating int) {
	if s == nil {
		return
	}
	s.reviews.WithLabelValues(strconv.Itoa(rating)).Inc()
}

// Register adds a collector of metrics kept elsewhere (`touchpoint dev`
// adds its embedded Temporal server's Actions).
func (s *Set) Register(c prometheus.Collector) { s.reg.MustRegister(c) }

// Path is where every process serves Handler.
const Path = "/metrics"

// Handler serves the metrics in the Prometheus text format.
func (s *Set) Handler() http.Handler {
	return promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg})
}

// Request records one HTTP request.
func (s *Set) Request(server, route, method string, status int, d time.Duration) {
	if s == nil {
		return
	}
	if route == "" {
		route = "unmatched" // unknown paths must not blow up the label set
	}
	s.httpRequests.WithLabelValues(server, route, method, strconv.Itoa(status)).Inc()
	s.httpDuration.WithLabelValues(server, route, method).Observe(d.Seconds())
}

// EventAccepted counts one newly accepted event.
func (s *Set) EventAccepted() {
	if s != nil {
		s.eventsAccepted.Inc()
	}
}

// WorkflowStart counts one start attempt of the outbox starter.
func (s *Set) WorkflowStart(kind, result string) {
	if s != nil {
		s.workflowStarts.WithLabelValues(kind, result).Inc()
	}
}

// TokenVerification counts one bearer token check.
func (s *Set) TokenVerification(result string) {
	if s != nil {
		s.tokenVerifications.WithLabelValues(result).Inc()
	}
}

// QuotaExceeded counts one refusal by an account quota (accountdb.Quota…).
func (s *Set) QuotaExceeded(kind string) {
	if s != nil {
		s.quotaExceeded.WithLabelValues(kind).Inc()
	}
}

// ReadEvery is how often, at most, a gauge read from the database asks it:
// scrapes within this time of the last read get that read's values, so
// scraping /metrics (unauthenticated) as often as anyone likes costs the
// database at most one query per gauge set and interval.
const ReadEvery = 2 * time.Second

// readTimeout bounds one database read of a scrape.
const readTimeout = 2 * time.Second

// WatchOutbox exports the outbox backlog (pending start orders and the age
// of the oldest), read from the database with one query at most every
// ReadEvery.
func (s *Set) WatchOutbox(backlog func(ctx context.Context) (int, time.Duration, error)) {
	s.watchBacklog(backlog,
		prometheus.NewDesc("touchpoint_outbox_pending",
			"Accepted events whose workflow has not been started yet (-1: database unreachable).", nil, nil),
		prometheus.NewDesc("touchpoint_outbox_oldest_pending_seconds",
			"Age of the oldest pending start order (-1: database unreachable).", nil, nil))
}

// watchBacklog exports a backlog read from the database — its size and
// the age of its oldest item — as two gauges, read at most every
// ReadEvery with one query for both.
func (s *Set) watchBacklog(backlog func(ctx context.Context) (int, time.Duration, error), pending, oldest *prometheus.Desc) {
	if s == nil {
		return
	}
	type reading struct {
		n   int
		age time.Duration
	}
	read := memo.New(ReadEvery, func(ctx context.Context) (reading, error) {
		n, age, err := backlog(ctx)
		return reading{n, age}, err
	})
	s.reg.MustRegister(&dbCollector{descs: []*prometheus.Desc{pending, oldest}, read: func(ctx context.Context) ([]float64, error) {
		r, err := read.Get(ctx)
		return []float64{float64(r.n), r.age.Seconds()}, err
	}})
}

// OverdueAfter is how far past its send time a scheduled invite counts as
// overdue (touchpoint_invites_overdue): well beyond the moments a healthy
// worker fleet takes to pick it up.
const OverdueAfter = 5 * time.Minute

// WatchOverdue exports touchpoint_invites_overdue: invites still scheduled
// more than OverdueAfter past their send time, the sign of a dead worker
// fleet. overdue is called with OverdueAfter, at most every ReadEvery.
func (s *Set) WatchOverdue(overdue func(ctx context.Context, after time.Duration) (int, error)) {
	if s == nil {
		return
	}
	read := memo.New(ReadEvery, func(ctx context.Context) (int, error) { return overdue(ctx, OverdueAfter) })
	desc := prometheus.NewDesc("touchpoint_invites_overdue",
		"Invites still scheduled more than 5 minutes past their send time: no worker sends them (-1: database unreachable).", nil, nil)
	s.reg.MustRegister(&dbCollector{descs: []*prometheus.Desc{desc}, read: func(ctx context.Context) ([]float64, error) {
		n, err := read.Get(ctx)
		return []float64{float64(n)}, err
	}})
}

// WatchPartitions exports touchpoint_partitions_ahead: the fewest months
// after the current one that every partitioned table has a partition for
// (housekeeping keeps three; fewer than two means it has not run for a
// month). ahead is called at most every ReadEvery.
func (s *Set) WatchPartitions(ahead func(ctx context.Context) (int, error)) {
	if s == nil {
		return
	}
	read := memo.New(ReadEvery, ahead)
	desc := prometheus.NewDesc("touchpoint_partitions_ahead",
		"Months after the current one that every partitioned table has a partition ready for (-1: database unreachable).", nil, nil)
	s.reg.MustRegister(&dbCollector{descs: []*prometheus.Desc{desc}, read: func(ctx context.Context) ([]float64, error) {
		n, err := read.Get(ctx)
		return []float64{float64(n)}, err
	}})
}

// dbCollector serves gauges read together from the database: one value
// per desc, or -1 for each when the database cannot be read.
type dbCollector struct {
	descs []*prometheus.Desc
	read  func(ctx context.Context) ([]float64, error)
}

func (c *dbCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *dbCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	vals, err := c.read(ctx)
	for i, d := range c.descs {
		v := -1.0 // the database is unreachable: the gauges say so
		if err == nil {
			v = vals[i]
		}
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
}

// Instrument records the requests of a server that has no route templates
// of its own (the issuer): a path in routes is its own label, any other
// path counts as "unmatched".
func (s *Set) Instrument(server string, routes []string, next http.Handler) http.Handler {
	if s == nil {
		return next
	}
	known := make(map[string]bool, len(routes))
	for _, r := range routes {
		known[r] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		route := ""
		if known[r.URL.Path] {
			route = r.URL.Path
		}
		s.Request(server, route, r.Method, rec.status, time.Since(start))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
