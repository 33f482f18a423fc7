package starter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/workflows"
)

// WebhookStarter starts one delivery workflow per webhook delivery row,
// the outbox that state changes write in their own transactions. It runs
// in `touchpoint worker` and is safe with any number of replicas: each
// batch of rows is locked with FOR UPDATE SKIP LOCKED until its starts
// are recorded. A starter that dies after a start and before recording it
// leaves the row to the next one, whose start Temporal rejects as a
// duplicate of the workflow ID (the delivery ID): that counts as started,
// so no delivery gets two workflows and none is left without one.
//
// It finds new rows by polling every Sweep, which costs one index probe
// when there is nothing to do. A NOTIFY from the transactions that write
// deliveries would save up to a Sweep of latency, but it would serialise
// the commits of every invite transition on PostgreSQL's notify queue.
type WebhookStarter struct {
	Store    *store.Store
	Temporal client.Client
	Logger   *slog.Logger // nil: discard
	// Tuning paces the starter; its Sweep, how often the rows are looked
	// for, defaults to 1 s.
	Tuning
}

// Run starts delivery workflows until ctx is cancelled. Rows being started
// when it stops are handed back untouched.
func (s *WebhookStarter) Run(ctx context.Context) error {
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	s.defaults(time.Second)
	p := pump[store.WebhookStart]{what: "webhook", logger: s.Logger, tuning: &s.Tuning, claim: s.claim, start: s.start}
	return p.run(ctx, nil)
}

// claim claims a batch of deliveries due to be started.
func (s *WebhookStarter) claim(ctx context.Context, limit int) (claimed[store.WebhookStart], error) {
	b, err := s.Store.ClaimWebhookStarts(ctx, limit)
	if err != nil {
		return claimed[store.WebhookStart]{}, err
	}
	finish := func(ctx context.Context, ok []store.WebhookStart, failed []failedStart[store.WebhookStart]) error {
		done := make([]string, len(ok))
		for i, d := range ok {
			done[i] = d.ID
		}
		retries := make([]store.WebhookStartRetry, len(failed))
		for i, f := range failed {
			retries[i] = store.WebhookStartRetry{ID: f.item.ID, After: s.backoff(f.item.StartAttempts), Error: f.err.Error()}
		}
		return b.Finish(ctx, done, retries)
	}
	return claimed[store.WebhookStart]{items: b.Starts, finish: finish, release: b.Release}, nil
}

// start starts the delivery's workflow; "already started" is success (see
// WebhookStarter). A delivery decided before its start (given up because
// its endpoint was disabled) needs none.
func (s *WebhookStarter) start(ctx context.Context, d store.WebhookStart) error {
	if d.Status != store.DeliveryPending {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.StartTimeout)
	defer cancel()
	_, err := s.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       workflows.WebhookWorkflowID(d.ID, d.Replays),
		TaskQueue:                                workflows.WebhookTaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            fmt.Sprintf("Webhook %s to endpoint %s", d.Type, d.EndpointID),
	}, workflows.WebhookWorkflowType, workflows.WebhookInput{DeliveryID: d.ID, EndpointID: d.EndpointID, AccountID: d.AccountID, Type: d.Type})
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &already) {
		return fmt.Errorf("start webhook workflow %s: %w", d.ID, err)
	}
	return nil
}
