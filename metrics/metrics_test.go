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

func TestOutboxGaugesReadTheBacklogOncePerScrape(t *testing.T) {
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

	down.Store(true)
	body = scrape(t, m)
	assert.Contains(t, body, "touchpoint_outbox_pending -1\n", "an unreachable database shows as -1")
	assert.Contains(t, body, "touchpoint_outbox_oldest_pending_seconds -1\n")
	assert.EqualValues(t, 2, calls.Load())
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
