package starter

import (
	"context"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/workflows"
)

// WebhookStarter starts one delivery workflow per webhook delivery row,
// the outbox that state changes write in their own transactions, as a
// one-shot starter (the workflow ID is the delivery's, and its replay's).
// It runs in `touchpoint worker` and is safe with any number of replicas:
// each batch of rows is locked with FOR UPDATE SKIP LOCKED until its
// starts are recorded.
//
// It finds new rows by polling every Sweep, which costs one index probe
// when there is nothing to do. A NOTIFY from the transactions that write
// deliveries would save up to a Sweep of latency, but it would serialise
// the commits of every invite transition on PostgreSQL's notify queue.
type WebhookStarter struct {
	Store interface {
		ClaimWebhookStarts(ctx context.Context, limit int) (*pg.StartBatch[webhookdb.WebhookStart], error)
	}
	Temporal client.Client
	Logger   *slog.Logger // nil: discard
	// Tuning paces the starter; its Sweep, how often the rows are looked
	// for, defaults to 1 s.
	Tuning
}

// Run starts delivery workflows until ctx is cancelled. Rows being started
// when it stops are handed back untouched.
func (s *WebhookStarter) Run(ctx context.Context) error {
	return runOnce(ctx, &s.Logger, &s.Tuning, oneShot[webhookdb.WebhookStart]{
		what:     "webhook",
		claim:    s.Store.ClaimWebhookStarts,
		id:       func(d webhookdb.WebhookStart) string { return d.ID },
		attempts: func(d webhookdb.WebhookStart) int { return d.StartAttempts },
		start:    s.start,
	})
}

// start starts the delivery's workflow (see WebhookStarter). A delivery
// decided before its start (given up because its endpoint was disabled)
// needs none.
func (s *WebhookStarter) start(ctx context.Context, d webhookdb.WebhookStart) error {
	if d.Status != webhookdb.DeliveryPending {
		return nil
	}
	err := startOnce(ctx, s.Temporal, s.StartTimeout, client.StartWorkflowOptions{
		ID:            workflows.WebhookWorkflowID(d.ID, d.Replays),
		TaskQueue:     workflows.WebhookTaskQueue,
		StaticSummary: fmt.Sprintf("Webhook %s to endpoint %s", d.Type, d.EndpointID),
	}, workflows.WebhookWorkflowType, workflows.WebhookInput{DeliveryID: d.ID, EndpointID: d.EndpointID, AccountID: d.AccountID, Type: d.Type})
	if err != nil {
		return fmt.Errorf("start webhook workflow %s: %w", d.ID, err)
	}
	return nil
}
