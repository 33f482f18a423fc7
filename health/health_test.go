package health_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/health"
)

// probe GETs path from a real HTTP server.
func probe(t *testing.T, srv *httptest.Server, path string) (int, health.Body, http.Header) {
	t.Helper()
	res, err := srv.Client().Get(srv.URL + path)
	require.NoError(t, err)
	defer res.Body.Close()
	var b health.Body
	require.NoError(t, json.NewDecoder(res.Body).Decode(&b))
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	return res.StatusCode, b, res.Header
}

func TestReadyz(t *testing.T) {
	t.Parallel()
	errDown := errors.New("dial tcp 10.0.0.7:5432: connection refused")
	for _, tc := range []struct {
		name   string
		checks map[string]health.Check
		code   int
		body   health.Body
	}{
		{"all ok", map[string]health.Check{
			"postgresql": func(context.Context) error { return nil },
			"poller":     func(context.Context) error { return nil },
		}, http.StatusOK, health.Body{Status: "ok", Checks: map[string]string{"postgresql": "ok", "poller": "ok"}}},
		{"one down", map[string]health.Check{
			"postgresql": func(context.Context) error { return errDown },
			"poller":     func(context.Context) error { return nil },
		}, http.StatusServiceUnavailable, health.Body{Status: "unavailable", Checks: map[string]string{"postgresql": "down", "poller": "ok"}}},
		{"a check that hangs times out", map[string]health.Check{
			"temporal": func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
		}, http.StatusServiceUnavailable, health.Body{Status: "unavailable", Checks: map[string]string{"temporal": "down"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(health.Handler(tc.checks, slog.New(slog.DiscardHandler)))
			defer srv.Close()
			code, body, h := probe(t, srv, "/readyz")
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.body, body)
			if code != http.StatusOK {
				assert.NotEmpty(t, h.Get("Retry-After"))
			}

			code, body, _ = probe(t, srv, "/healthz")
			assert.Equal(t, http.StatusOK, code, "alive, whatever the checks say")
			assert.Equal(t, "ok", body.Status)
		})
	}
}

// TestReadyzRevealsNoErrorText: the answer to an unauthenticated probe
// names the failing check, not its error (hosts, addresses); the log has it.
func TestReadyzRevealsNoErrorText(t *testing.T) {
	t.Parallel()
	var log syncWriter
	srv := httptest.NewServer(health.Handler(map[string]health.Check{
		"postgresql": func(context.Context) error { return errors.New("dial tcp 10.0.0.7:5432: connection refused") },
	}, slog.New(slog.NewJSONHandler(&log, nil))))
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL + "/readyz")
	require.NoError(t, err)
	var raw bytes.Buffer
	_, err = raw.ReadFrom(res.Body)
	require.NoError(t, err)
	res.Body.Close()
	assert.NotContains(t, raw.String(), "10.0.0.7")
	assert.Contains(t, log.String(), "10.0.0.7")
	assert.Contains(t, log.String(), `"check":"postgresql"`)
}

// TestChecksRunAtMostOncePerInterval: a flood of probes runs each check
// once per CheckEvery; a change shows after that.
func TestChecksRunAtMostOncePerInterval(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	var down atomic.Bool
	srv := httptest.NewServer(health.Handler(map[string]health.Check{
		"postgresql": func(context.Context) error {
			calls.Add(1)
			if down.Load() {
				return errors.New("down")
			}
			return nil
		},
	}, slog.New(slog.DiscardHandler)))
	defer srv.Close()

	// Taken before the first check runs, so the wait measured below is at
	// least the check's age however slowly the probes go.
	start := time.Now()
	for range 50 {
		code, _, _ := probe(t, srv, "/readyz")
		require.Equal(t, http.StatusOK, code)
	}
	assert.EqualValues(t, 1, calls.Load())

	down.Store(true)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, _, _ := probe(t, srv, "/readyz")
		assert.Equal(c, http.StatusServiceUnavailable, code)
	}, 10*time.Second, 10*time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(start), health.CheckEvery-100*time.Millisecond)
	assert.EqualValues(t, 2, calls.Load())
}

// syncWriter is a buffer safe for the handler's goroutines.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
