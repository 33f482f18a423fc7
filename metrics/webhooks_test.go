package metrics_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/metrics"
)

func TestWebhookMetrics(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	var calls atomic.Int32
	var down atomic.Bool
	m.WatchWebhooks(func(context.Context) (int, time.Duration, error) {
		calls.Add(1)
		if down.Load() {
			return 0, 0, errors.New("connection refused")
		}
		return 3, 20 * time.Minute, nil
	})
	m.WebhookDelivery(metrics.WebhookSucceeded)
	m.WebhookDelivery(metrics.WebhookSucceeded)
	m.WebhookDelivery(metrics.WebhookGone)

	body := scrape(t, m)
	assert.Contains(t, body, "touchpoint_webhook_pending 3\n")
	assert.Contains(t, body, "touchpoint_webhook_oldest_pending_seconds 1200\n")
	assert.Contains(t, body, `touchpoint_webhook_deliveries_total{outcome="succeeded"} 2`+"\n")
	assert.Contains(t, body, `touchpoint_webhook_deliveries_total{outcome="gone"} 1`+"\n")
	assert.EqualValues(t, 1, calls.Load(), "one backlog query for both gauges")

	// Read at most every ReadEvery, like the outbox gauges.
	down.Store(true)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		body := scrape(t, m)
		assert.Contains(c, body, "touchpoint_webhook_pending -1\n", "an unreachable database shows as -1")
		assert.Contains(c, body, "touchpoint_webhook_oldest_pending_seconds -1\n")
	}, 10*time.Second, 20*time.Millisecond)
	assert.EqualValues(t, 2, calls.Load(), "one more query for every scrape of the interval")

	var none *metrics.Set
	none.WebhookDelivery(metrics.WebhookFailed) // a nil set records nothing
	none.WatchWebhooks(nil)
}
