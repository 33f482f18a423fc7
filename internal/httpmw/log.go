package httpmw

import (
	"log/slog"
	"net/http"
	"time"
)

// recorder remembers the status and size of an answer for the log.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	n, err := rec.ResponseWriter.Write(b)
	rec.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the real writer.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// Line is what the log line of a request says besides its method,
// status, size, duration and the peer's address, as the server that
// answered it knows them once it has.
type Line struct {
	RequestID string
	// Path is the request's path as the log may show it: never the query
	// string, which may hold personal data.
	Path string
	// Route is the path template of the route that answered; "" when
	// none matched.
	Route string
	// Probe: a health probe's line, logged at debug level.
	Probe bool
	// Attrs follow the common attributes: who made the request, what it
	// made.
	Attrs []slog.Attr
	// Err is the internal error behind the answer, for the log only.
	Err error
}

// Log writes one JSON line per request to log once it is answered: 5xx
// at error level (with the internal error), probes at debug. describe
// says what the line holds of the request; it never holds a header (the
// Authorization header above all). observe, when not nil, is told of
// every answer, for metrics.
func Log(log *slog.Logger, describe func(r *http.Request) Line, observe func(route, method string, status int, took time.Duration),
	next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		line := describe(r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		level := slog.LevelInfo
		switch {
		case rec.status >= 500:
			level = slog.LevelError
		case line.Probe:
			level = slog.LevelDebug
		}
		attrs := []slog.Attr{
			slog.String("request_id", line.RequestID),
			slog.String("method", r.Method),
			slog.String("path", line.Path),
			slog.String("route", line.Route),
			slog.Int("status", rec.status),
			slog.Int64("bytes", rec.bytes),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("remote_addr", r.RemoteAddr),
		}
		attrs = append(attrs, line.Attrs...)
		if line.Err != nil {
			attrs = append(attrs, slog.String("error", line.Err.Error()))
		}
		log.LogAttrs(r.Context(), level, "request", attrs...)
		if observe != nil {
			observe(line.Route, r.Method, rec.status, time.Since(start))
		}
	})
}
