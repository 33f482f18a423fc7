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
