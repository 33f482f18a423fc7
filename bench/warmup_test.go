package bench

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBenchWarmUp checks that bench opens all of its connections before
// the clock starts and that a failing API stops the run.
func TestBenchWarmUp(t *testing.T) {
	const c = 8
	var conns, requests atomic.Int64
	var inFlight sync.WaitGroup
	inFlight.Add(c)
	var arrived atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		assert.Equal(t, "Bearer tok", r.Header.Get("Authorization"))
		assert.Equal(t, "bench-x", r.URL.Query().Get("name"))
		// The first c requests wait for each other: a warm-up that sent
		// them one by one over a single connection would hang here.
		if arrived.Add(1) <= c {
			inFlight.Done()
			inFlight.Wait()
		}
		w.Write([]byte(`{"data":[]}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = c
	api := &benchAPI{t: Target{BaseURL: srv.URL}, http: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		tokens: &tokenSource{token: "tok", idle: time.Hour, lastUse: time.Now(), now: time.Now}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, api.warmUp(ctx, "bench-x", c, newProgress(io.Discard)))
	assert.GreaterOrEqual(t, conns.Load(), int64(c), "a connection per client")
	assert.EqualValues(t, 4*c, requests.Load())

	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	api.t.BaseURL = failing.URL
	err := api.warmUp(ctx, "bench-x", c, newProgress(io.Discard))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "warm up")
}
