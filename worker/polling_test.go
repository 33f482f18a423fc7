package worker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
	"github.com/touchpoint/touchpoint/workflows"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestPollingFollowsARealWorker: against a real Temporal server, Running
// is false until Start has returned, true while the worker polls, and
// false again once Run has stopped it.
func TestPollingFollowsARealWorker(t *testing.T) {
	t.Parallel()
	srv := testtemporal.Start(t, testtemporal.Options{SearchAttributes: workflows.SearchAttributes()})
	c, err := client.Dial(client.Options{HostPort: srv.Address()})
	require.NoError(t, err)
	defer c.Close()

	p := new(Polling)
	// No activity runs here: an empty store is enough to build the worker.
	w := New(c, &activities.Activities{}, Options{Polling: p, Worker: sdkworker.Options{WorkerStopTimeout: time.Second}})
	assert.False(t, p.Running(), "not started yet")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, c, w, quiet) }()
	require.Eventually(t, p.Running, time.Minute, 10*time.Millisecond)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after its context ended")
	}
	assert.False(t, p.Running(), "stopped")
}

// fakeWorker is a worker whose Start and Stop only count.
type fakeWorker struct {
	sdkworker.Worker
	startErr error
	stops    atomic.Int32
}

func (w *fakeWorker) Start() error { return w.startErr }
func (w *fakeWorker) Stop()        { w.stops.Add(1) }

// healthyClient answers CheckHealth and nothing else.
type healthyClient struct{ client.Client }

func (healthyClient) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	return &client.CheckHealthResponse{}, nil
}

// TestAFatalErrorEndsRun: the SDK's fatal error (say, the namespace was
// deleted) stops the pollers; Polling says so at once and Run ends with
// the error, so the process exits instead of living on without pollers.
func TestAFatalErrorEndsRun(t *testing.T) {
	t.Parallel()
	var theirs error
	p := new(Polling)
	opts := Options{Polling: p, Worker: sdkworker.Options{OnFatalError: func(err error) { theirs = err }}}.sdkOptions()
	assert.Equal(t, DefaultStopTimeout, opts.WorkerStopTimeout)

	w := &fakeWorker{}
	done := make(chan error, 1)
	go func() { done <- p.Run(context.Background(), healthyClient{}, w, quiet) }()
	require.Eventually(t, p.Running, 10*time.Second, time.Millisecond)

	fatal := errors.New("namespace touchpoint is not found")
	opts.OnFatalError(fatal) // as the SDK calls it
	assert.False(t, p.Running())
	assert.Equal(t, fatal, theirs, "an OnFatalError of the caller's own still runs")
	select {
	case err := <-done:
		require.ErrorIs(t, err, fatal)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end on the fatal error")
	}
	assert.False(t, p.Running())
	assert.EqualValues(t, 1, w.stops.Load())
}

func TestAFailedStartIsNotRunning(t *testing.T) {
	t.Parallel()
	p := new(Polling)
	err := p.Run(context.Background(), healthyClient{}, &fakeWorker{startErr: errors.New("no such namespace")}, quiet)
	require.ErrorContains(t, err, "start worker: no such namespace")
	assert.False(t, p.Running())
}
