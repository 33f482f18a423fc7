package e2e_test

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
)

// workerEnv is the environment of a lone `touchpoint worker` whose
// Temporal is nowhere: a freshly migrated database, an SMTP URL it never
// uses, Temporal at an address nothing listens on.
func workerEnv(t *testing.T, bin string, extra map[string]string) []string {
	t.Helper()
	gone := freeAddrs(t, 1)[0] // free a moment ago, and nobody listens there
	s := &stack{tb: t, env: map[string]string{
		"DATABASE_URL":          testdb.NewURL(t),
		"TEMPORAL_ADDRESS":      gone,
		"TEMPORAL_CONFIG_FILE":  filepath.Join(t.TempDir(), "absent.toml"),
		"TOUCHPOINT_SMTP_URL":   "smtp://127.0.0.1:1",
		"TOUCHPOINT_SECRET_KEY": "e2e-test-secret-key-0123456789abcdef",
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	migrate := exec.CommandContext(ctx, bin, "migrate", "--schema-only")
	migrate.Env = s.childEnv(nil)
	out, err := migrate.CombinedOutput()
	require.NoError(t, err, "migrate:\n%s", out)
	return s.childEnv(extra)
}

// TestWorkerReadiness: a worker that cannot reach Temporal is alive
// (/healthz 200) but not ready: /readyz is 503 and names what is down —
// Temporal, and so its pollers — and what is not (PostgreSQL); /metrics
// serves the database gauges.
func TestWorkerReadiness(t *testing.T) {
	t.Parallel()
	bin := touchpointBinary(t)
	addr := freeAddrs(t, 1)[0]
	w := startProc(t, bin, "worker", workerEnv(t, bin, map[string]string{"TOUCHPOINT_WORKER_ADDR": addr}), "worker")

	var code int
	var body map[string]any
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var err error
		code, body, err = getJSON("http://" + addr + "/readyz")
		assert.NoError(c, err)
	}, time.Minute, 50*time.Millisecond, "the worker serves /readyz (output:\n%s)", w.out.Tail(4<<10))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, map[string]any{"status": "unavailable",
		"checks": map[string]any{"poller": "down", "postgresql": "ok", "temporal": "down"}}, body)

	code, body, err := getJSON("http://" + addr + "/healthz")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code, "alive: %v", body)

	res, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	metrics := readAll(t, res)
	for _, line := range []string{"touchpoint_invites_overdue 0", "touchpoint_outbox_pending 0", "touchpoint_outbox_oldest_pending_seconds 0"} {
		assert.Contains(t, metrics, "\n"+line+"\n")
	}
}

// TestWorkerWithoutItsDefaultAddress: with TOUCHPOINT_WORKER_ADDR unset
// and its default address taken (another worker on the same machine), a
// worker warns and goes on; with the address set explicitly, a taken one
// stops it with a message naming it.
func TestWorkerWithoutItsDefaultAddress(t *testing.T) {
	t.Parallel()
	bin := touchpointBinary(t)
	// Hold the default address, unless someone else already does: either
	// way it is taken.
	ln, err := net.Listen("tcp", "127.0.0.1:8082")
	held := err == nil
	if held {
		t.Cleanup(func() { ln.Close() })
	}

	w := startProc(t, bin, "worker", workerEnv(t, bin, nil), "worker")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		out := w.out.Tail(64 << 10)
		assert.Contains(c, out, "no /healthz, /readyz or /metrics for this worker: its default address is taken")
		// It goes on: it waits for Temporal, as a worker does.
		assert.Contains(c, out, "worker cannot reach Temporal yet")
	}, time.Minute, 50*time.Millisecond)
	select {
	case <-w.done:
		t.Fatalf("the worker exited: %v\n%s", w.err, w.out.Tail(4<<10))
	default:
	}

	if !held {
		return // whoever holds it may let it go: only a held address makes the next check sure
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "worker")
	cmd.Env = workerEnv(t, bin, map[string]string{"TOUCHPOINT_WORKER_ADDR": "127.0.0.1:8082"})
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "a worker whose address is taken stops")
	assert.True(t, strings.Contains(string(out), "cannot listen on 127.0.0.1:8082"), string(out))
}
