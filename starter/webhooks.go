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
	// Sweep is how often the rows are looked for; default 1 s.
	Sweep time.Duration
	// BatchSize rows are claimed at once; Concurrency starts run in
	// parallel. Defaults 200 and 16.
	BatchSize, Concurrency int
	// StartTimeout bounds one StartWorkflow call; default 10 s.
	StartTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before a failed start is
	// tried again (defaults 1 s and 1 min), doubling with its attempts.
	MinBackoff, MaxBackoff time.Duration
}

func (s *WebhookStarter) defaults() {
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Sweep == 0 {
		s.Sweep = time.Second
	}
	if s.BatchSize == 0 {
		s.BatchSize = 200
	}
	if s.Concurrency == 0 {
		s.Concurrency = 16
	}
	if s.StartTimeout == 0 {
		s.StartTimeout = 10 * time.Second
	}
	if s.MinBackoff == 0 {
		s.MinBackoff = time.Second
	}
	if s.MaxBackoff == 0 {
		s.MaxBackoff = time.Minute
	}
}

// Run starts delivery workflows until ctx is cancelled. Rows being started
// when it stops are handed back untouched.
func (s *WebhookStarter) Run(ctx context.Context) error {
	s.defaults()
	t := time.NewTicker(s.Sweep)
	defer t.Stop()
	for {
		s.drain(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// drain starts due deliveries batch by batch until none are left or a
// batch makes no progress (Temporal down: its rows were rescheduled).
func (s *WebhookStarter) drain(ctx context.Context) {
	for ctx.Err() == nil {
		started, claimed, err := s.startBatch(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.Logger.Error("webhook start batch", "error", err)
			}
			return
		}
		if claimed < s.BatchSize || started == 0 {
			return
		}
	}
}

// startBatch claims one batch and starts its workflows.
func (s *WebhookStarter) startBatch(ctx context.Context) (started, claimed int, err error) {
	batch, err := s.Store.ClaimWebhookStarts(ctx, s.BatchSize)
	if err != nil {
		return 0, 0, err
	}
	if len(batch.Starts) == 0 {
		return 0, 0, batch.Release()
	}
	ok, failed := startEach(ctx, batch.Starts, s.Concurrency, s.start)
	done := make([]string, len(ok))
	for i, d := range ok {
		done[i] = d.ID
	}
	retries := make([]store.WebhookStartRetry, len(failed))
	for i, f := range failed {
		retries[i] = store.WebhookStartRetry{ID: f.item.ID, After: backoff(s.MinBackoff, s.MaxBackoff, f.item.StartAttempts), Error: f.err.Error()}
	}
	if ctx.Err() != nil {
		return 0, len(batch.Starts), batch.Release()
	}
	if len(retries) > 0 {
		s.Logger.Warn("webhook workflow starts failed; will retry", "failed", len(retries), "started", len(done), "error", retries[0].Error)
	}
	if err := batch.Finish(ctx, done, retries); err != nil {
		return 0, len(batch.Starts), err
	}
	return len(done), len(batch.Starts), nil
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
		ID:                                       workflows.WebhookWorkflowID(d.ID),
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

// backoff grows from lo to hi with the attempts made.
func backoff(lo, hi time.Duration, attempts int) time.Duration {
	d := lo
	for i := 0; i < attempts && d < hi; i++ {
		d *= 2
	}
	return min(d, hi)
}
