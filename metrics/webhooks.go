package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Webhook outcomes of touchpoint_webhook_deliveries_total.
const (
	WebhookSucceeded = "succeeded" // answered 2xx
	WebhookGone      = "gone"      // answered 410: the endpoint is disabled
	WebhookFailed    = "failed"    // given up: retries ran out, or the endpoint was disabled
)

func newWebhookDeliveries() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "touchpoint_webhook_deliveries_total",
		Help: "Webhook deliveries that ended, by outcome (succeeded, gone: answered 410, failed: given up). Counted by the worker.",
	}, []string{"outcome"})
}

// WebhookDelivery counts a delivery that ended with outcome.
func (s *Set) WebhookDelivery(outcome string) {
	if s != nil {
		s.webhookDeliveries.WithLabelValues(outcome).Inc()
	}
}

// WatchWebhooks exports the webhook backlog (deliveries neither succeeded
// nor given up, and the age of the oldest), read from the database once
// at most every ReadEvery.
func (s *Set) WatchWebhooks(backlog func(ctx context.Context) (int, time.Duration, error)) {
	s.watchBacklog(backlog,
		prometheus.NewDesc("touchpoint_webhook_pending",
			"Webhook deliveries not yet succeeded or given up (-1: database unreachable).", nil, nil),
		prometheus.NewDesc("touchpoint_webhook_oldest_pending_seconds",
			"Age of the oldest webhook delivery not yet succeeded or given up (-1: database unreachable).", nil, nil))
}
