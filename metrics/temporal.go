package metrics

import (
	"io"
	"time"

	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
)

// TemporalHandler returns the Temporal SDK's metrics handler, exporting
// the SDK's own metrics (requests, polls, task latencies, activity and
// workflow outcomes) into this Set under the temporal_ prefix. Close the
// returned io.Closer on shutdown. A nil Set gives the SDK's no-op handler.
func (s *Set) TemporalHandler() (client.MetricsHandler, io.Closer) {
	if s == nil {
		return client.MetricsNopHandler, io.NopCloser(nil)
	}
	reporter := tallyprom.NewReporter(tallyprom.Options{Registerer: s.reg})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &tallyprom.DefaultSanitizerOpts,
	}, time.Second)
	return sdkHandler{scope}, closer
}

// sdkHandler adapts a tally scope to the SDK's metrics interface.
type sdkHandler struct{ scope tally.Scope }

func (h sdkHandler) WithTags(tags map[string]string) client.MetricsHandler {
	return sdkHandler{h.scope.Tagged(tags)}
}
func (h sdkHandler) Counter(name string) client.MetricsCounter { return h.scope.Counter(name) }
func (h sdkHandler) Gauge(name string) client.MetricsGauge     { return h.scope.Gauge(name) }
func (h sdkHandler) Timer(name string) client.MetricsTimer     { return h.scope.Timer(name) }
