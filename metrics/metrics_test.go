package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/metrics"
)

// scrape fetches the exposition text of m.
func scrape(t *testing.T, m *metrics.Set) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	body, err := io.ReadAll(rec.Body)
	require.NoError(t, err)
	return string(body)
}

func TestOutboxGaugesReadTheBacklogOncePerInterval(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	var calls atomic.Int32
	down := atomic.Bool{}
	m.WatchOutbox(func(context.Context) (int, time.Duration, error) {
		calls.Add(1)
		if down.Load() {
			return 0, 0, errors.New("connection refused")
		}
		return 7, 90 * time.Second, nil
	})

	body := scrape(t, m)
	assert.Contains(t, body, "touchpoint_outbox_pending 7\n")
	assert.Contains(t, body, "touchpoint_outbox_oldest_pending_seconds 90\n")
	assert.EqualValues(t, 1, calls.Load(), "one backlog query for both gauges")

	// The database goes away. Scrapes as fast as they come do not reach it
	// until ReadEvery has passed; then one does, and sees it down.
	down.Store(true)
	start := time.Now()
	body = scrape(t, m)
	assert.Contains(t, body, "touchpoint_outbox_pending 7\n", "read a moment ago: not read again")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		body := scrape(t, m)
		assert.Contains(c, body, "touchpoint_outbox_pending -1\n", "an unreachable database shows as -1")
		assert.Contains(c, body, "touchpoint_outbox_oldest_pending_seconds -1\n")
	}, 10*time.Second, 20*time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(start), metrics.ReadEvery-100*time.Millisecond)
	assert.EqualValues(t, 2, calls.Load(), "one more query for every scrape of the interval")
}

func TestOverdueGauge(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	var calls atomic.Int32
	var after atomic.Int64
	m.WatchOverdue(func(_ context.Context, a time.Duration) (int, error) {
		calls.Add(1)
		after.Store(int64(a))
		return 3, nil
	})
	for range 5 {
		assert.Contains(t, scrape(t, m), "touchpoint_invites_overdue 3\n")
	}
	assert.EqualValues(t, 1, calls.Load(), "scrapes within ReadEvery share one read")
	assert.Equal(t, 5*time.Minute, time.Duration(after.Load()), "overdue means more than 5 minutes late")

	down := metrics.New()
	down.WatchOverdue(func(context.Context, time.Duration) (int, error) { return 0, errors.New("connection refused") })
	assert.Contains(t, scrape(t, down), "touchpoint_invites_overdue -1\n", "an unreachable database shows as -1")
}

func TestQuotaExceededByKind(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	m.QuotaExceeded("daily_sends")
	m.QuotaExceeded("daily_sends")
	m.QuotaExceeded("channels")
	var none *metrics.Set
	none.QuotaExceeded("channels") // a nil Set records nothing
	body := scrape(t, m)
	assert.Contains(t, body, `touchpoint_quota_exceeded_total{kind="daily_sends"} 2`+"\n")
	assert.Contains(t, body, `touchpoint_quota_exceeded_total{kind="channels"} 1`+"\n")
}

// TestReplicaGauges: the replica's lag and whether its reads fall back to
// the primary, as its last probe found them, and the reads by outcome.
func TestReplicaGauges(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	type state struct {
		lag         time.Duration
		up, serving bool
	}
	var now atomic.Pointer[state]
	now.Store(&state{lag: 1500 * time.Millisecond, up: true, serving: true})
	m.WatchReplica(func() (time.Duration, bool, bool) { s := now.Load(); return s.lag, s.up, s.serving })
	m.ReplicaRead("replica")
	m.ReplicaRead("replica")
	m.ReplicaRead("own_write")

	body := scrape(t, m)
	assert.Contains(t, body, "touchpoint_db_replica_lag_seconds 1.5\n")
	assert.Contains(t, body, "touchpoint_db_replica_fallback 0\n")
	assert.Contains(t, body, `touchpoint_db_replica_reads_total{outcome="replica"} 2`+"\n")
	assert.Contains(t, body, `touchpoint_db_replica_reads_total{outcome="own_write"} 1`+"\n")

	now.Store(&state{lag: 45 * time.Second, up: true})
	body = scrape(t, m)
	assert.Contains(t, body, "touchpoint_db_replica_lag_seconds 45\n")
	assert.Contains(t, body, "touchpoint_db_replica_fallback 1\n", "lagging: reads go to the primary")

	now.Store(&state{})
	body = scrape(t, m)
	assert.Contains(t, body, "touchpoint_db_replica_lag_seconds -1\n", "down")
	assert.Contains(t, body, "touchpoint_db_replica_fallback 1\n")
}
