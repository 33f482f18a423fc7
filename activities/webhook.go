package activities

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/webhook"
	"github.com/touchpoint/touchpoint/workflows"
)

// Deliveries is what a delivery's attempts read and record.
type Deliveries interface {
	LoadWebhookAttempt(ctx context.Context, deliveryID string) (webhookdb.WebhookAttempt, error)
	RecordWebhookAttempt(ctx context.Context, deliveryID string, r webhookdb.AttemptResult) (webhookdb.WebhookDelivery, error)
	FailWebhookDelivery(ctx context.Context, deliveryID, reason, lastError string) (webhookdb.WebhookDelivery, error)
}

// Webhooks holds the activities of the webhook delivery workflow, which
// the worker registers on the webhooks task queue. Each attempt reads the
// delivery and its endpoint from PostgreSQL, posts the stored body once
// through the SSRF-safe client and records the answer; Temporal's retry
// policy spaces the attempts.
type Webhooks struct {
	Store Deliveries
	// Client posts the webhooks; one per process (it pools connections).
	Client *webhook.Client
	// Secrets opens the endpoints' sealed signing secrets.
	Secrets *webhook.SecretBox
	// Metrics counts deliveries by outcome. Optional.
	Metrics *metrics.Set
	Clock   func() time.Time // nil: time.Now
	Logger  *slog.Logger     // nil: discard
}

// DeliverWebhook makes one attempt at a delivery and records it. A
// delivery decided already (succeeded, failed, deleted with its endpoint)
// is not sent again; one whose endpoint is disabled is given up unsent.
// An attempt answered 2xx or 410 decides the delivery; any other answer,
// or none, is recorded and returned as a retryable ErrTypeWebhookAttempt
// error with the reason the shop will see.
func (w *Webhooks) DeliverWebhook(ctx context.Context, in workflows.WebhookInput) (workflows.WebhookResult, error) {
	att, err := w.Store.LoadWebhookAttempt(ctx, in.DeliveryID)
	if errors.Is(err, pg.ErrNotFound) {
		return workflows.WebhookResult{Status: workflows.WebhookDeleted}, nil
	}
	if err != nil {
		return workflows.WebhookResult{}, err
	}
	log := w.logger().With("delivery_id", in.DeliveryID, "endpoint_id", att.Delivery.EndpointID, "type", att.Delivery.Type)
	switch {
	case att.Delivery.Status != webhookdb.DeliveryPending:
		return resultOf(att.Delivery), nil
	case !att.Enabled:
		d, err := w.Store.FailWebhookDelivery(ctx, in.DeliveryID, webhookdb.ReasonEndpointDisabled, "endpoint disabled")
		if err != nil {
			return workflows.WebhookResult{}, webhookStoreError(err)
		}
		w.Metrics.WebhookDelivery(metrics.WebhookFailed)
		log.InfoContext(ctx, "webhook not sent: endpoint disabled")
		return resultOf(d), nil
	}

	secrets := make([]string, 0, len(att.Secrets))
	for _, sealed := range att.Secrets {
		secret, err := w.Secrets.Open(att.Delivery.EndpointID, sealed)
		if err != nil {
			// Recorded and retried: a deployment with the wrong
			// TOUCHPOINT_SECRET_KEY can be fixed within the retries.
			log.ErrorContext(ctx, "webhook secret does not open", "error", err)
			return w.record(ctx, log, in.DeliveryID, webhook.Result{Outcome: webhook.Failed,
				Err: "cannot sign: the endpoint's secret could not be read (server configuration)"}, 0)
		}
		secrets = append(secrets, secret)
	}
	started := time.Now()
	res := w.Client.Deliver(ctx, webhook.Delivery{URL: att.URL, MsgID: att.Delivery.ID, Timestamp: w.now(),
		Body: att.Delivery.Payload, Secrets: secrets})
	return w.record(ctx, log, in.DeliveryID, res, time.Since(started))
}

// record stores the attempt, which took took, and turns its outcome into
// the activity's answer.
func (w *Webhooks) record(ctx context.Context, log *slog.Logger, deliveryID string, res webhook.Result,
	took time.Duration) (workflows.WebhookResult, error) {
	d, err := w.Store.RecordWebhookAttempt(ctx, deliveryID, webhookdb.AttemptResult{StatusCode: res.StatusCode, Error: res.Err,
		Delivered: res.Outcome == webhook.Succeeded, Gone: res.Outcome == webhook.Gone, Took: took})
	if err != nil {
		// Not recorded: the attempt is made again (same webhook-id), so a
		// delivered message may arrive twice, never be lost.
		log.WarnContext(ctx, "webhook attempt not recorded; trying again", "outcome", res.Outcome, "error", err)
		return workflows.WebhookResult{}, webhookStoreError(err)
	}
	switch res.Outcome {
	case webhook.Succeeded:
		w.Metrics.WebhookDelivery(metrics.WebhookSucceeded)
		log.InfoContext(ctx, "webhook delivered", "status_code", res.StatusCode, "attempt", d.Attempts)
		return resultOf(d), nil
	case webhook.Gone:
		w.Metrics.WebhookDelivery(metrics.WebhookGone)
		log.WarnContext(ctx, "webhook endpoint answered 410 Gone; endpoint disabled", "attempt", d.Attempts)
		return resultOf(d), nil
	}
	log.InfoContext(ctx, "webhook attempt failed", "status_code", res.StatusCode, "error", res.Err, "attempt", d.Attempts)
	return resultOf(d), temporal.NewApplicationError(res.Err, workflows.ErrTypeWebhookAttempt)
}

// GiveUpWebhook fails a delivery whose retries ran out; one decided
// meanwhile is only read back.
func (w *Webhooks) GiveUpWebhook(ctx context.Context, in workflows.GiveUpWebhookInput) (workflows.WebhookResult, error) {
	d, err := w.Store.FailWebhookDelivery(ctx, in.DeliveryID, webhookdb.ReasonRetriesExhausted, in.Reason)
	if errors.Is(err, pg.ErrNotFound) {
		return workflows.WebhookResult{Status: workflows.WebhookDeleted}, nil
	}
	if err != nil {
		return workflows.WebhookResult{}, err
	}
	if d.Status == webhookdb.DeliveryFailed {
		w.Metrics.WebhookDelivery(metrics.WebhookFailed)
		w.logger().WarnContext(ctx, "webhook given up", "delivery_id", in.DeliveryID, "endpoint_id", d.EndpointID,
			"attempts", d.Attempts, "last_error", d.LastError.String)
	}
	return resultOf(d), nil
}

// webhookStoreError keeps a delivery deleted mid-attempt from being
// retried for days: there is nothing left to deliver.
func webhookStoreError(err error) error {
	if errors.Is(err, pg.ErrNotFound) {
		return temporal.NewNonRetryableApplicationError("webhook delivery deleted", workflows.ErrTypeWebhookFailed, nil)
	}
	return err
}

func resultOf(d webhookdb.WebhookDelivery) workflows.WebhookResult {
	return workflows.WebhookResult{Status: d.Status, Attempts: d.Attempts, LastStatusCode: int(d.LastStatusCode.Int32),
		LastError: d.LastError.String}
}

func (w *Webhooks) now() time.Time {
	if w.Clock != nil {
		return w.Clock()
	}
	return time.Now()
}

func (w *Webhooks) logger() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.New(slog.DiscardHandler)
}
