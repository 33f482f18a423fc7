// Package starter turns the outbox rows written by accepted events into
// Temporal workflow starts. It runs inside `touchpoint api`, woken at once
// by LISTEN/NOTIFY and by a periodic sweep, and is safe with any number of
// API replicas: each batch of rows is locked with FOR UPDATE SKIP LOCKED
// until its starts are done.
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

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/workflows"
)

// Starter starts one invite workflow per outbox row.
type Starter struct {
	Store    *store.Store
	Temporal client.Client
	Logger   *slog.Logger
	// DatabaseURL is used for the LISTEN connection.
	DatabaseURL string
	// Sweep is the backstop interval when no notification arrives.
	Sweep time.Duration
	// BatchSize rows are claimed at once; Concurrency starts run in parallel.
	BatchSize, Concurrency int
	// Metrics counts the starts. Optional.
	Metrics *metrics.Set
	// StartTimeout bounds one StartWorkflow call.
	StartTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before a failed start is
	// tried again: it doubles with the order's attempts from MinBackoff
	// (default 1 s) up to MaxBackoff (default 1 min).
	MinBackoff, MaxBackoff time.Duration
}

func (s *Starter) defaults() {
	if s.Sweep == 0 {
		s.Sweep = 5 * time.Second
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

// Run starts workflows until ctx is cancelled. Rows being started when it
// stops are handed back untouched.
func (s *Starter) Run(ctx context.Context) error {
	s.defaults()
	listener := store.ListenOutbox(s.DatabaseURL, s.Logger)
	defer listener.Close()
	sweep := time.NewTicker(s.Sweep)
	defer sweep.Stop()
	for {
		s.drain(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-listener.Wake():
		case <-sweep.C:
		}
	}
}

// drain starts due orders batch by batch until none are left or a batch
// makes no progress (Temporal down: its rows were rescheduled).
func (s *Starter) drain(ctx context.Context) {
	for ctx.Err() == nil {
		started, claimed, err := s.startBatch(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.Logger.Error("outbox batch", "error", err)
			}
			return
		}
		if claimed < s.BatchSize || started == 0 {
			return
		}
	}
}

// startBatch claims one batch and starts its workflows.
func (s *Starter) startBatch(ctx context.Context) (started, claimed int, err error) {
	batch, err := s.Store.ClaimOutbox(ctx, s.BatchSize)
	if err != nil {
		return 0, 0, err
	}
	if len(batch.Orders) == 0 {
		return 0, 0, batch.Release()
	}
	ok, failed := startEach(ctx, batch.Orders, s.Concurrency, s.start)
	done := make([]int64, len(ok))
	for i, o := range ok {
		done[i] = o.ID
	}
	retries := make([]store.Retry, len(failed))
	for i, f := range failed {
		retries[i] = store.Retry{ID: f.item.ID, After: s.backoff(f.item.Attempts), Error: f.err.Error()}
	}
	if ctx.Err() != nil {
		// Shutting down: hand the whole batch back untouched; the next
		// starter recognises the starts that did happen (see start).
		return 0, len(batch.Orders), batch.Release()
	}
	if len(retries) > 0 {
		s.Logger.Warn("workflow starts failed; will retry", "failed", len(retries), "started", len(done), "error", retries[0].Error)
	}
	if err := batch.Finish(ctx, done, retries); err != nil {
		return 0, len(batch.Orders), err
	}
	return len(done), len(batch.Orders), nil
}

// start starts the order's workflow run, or finds that it needs none.
//
// A starter may stop after a start and before marking its order done; the
// next one must not start a second run for that order. A first start uses
// the reuse policy "reject duplicate": any run with the ID, open or
// closed, can only be the order's own, so "already started" is success. A
// retry may follow a failed run only and must wait while the earlier run
// is open ("already started" is an error, to try again later); its own
// run is recognised in PostgreSQL instead: RetryInvite left the invite
// pending, and only a run moves it on.
func (s *Starter) start(ctx context.Context, o store.StartOrder) error {
	result, err := s.startRun(ctx, o)
	s.Metrics.WorkflowStart(o.Kind, result)
	return err
}

// startRun starts the run and says how it went: started, existing (the
// run was there already), skipped (nothing to run) or error.
//
// A restart (store.OutboxRestart, ordered by the reconciler for an invite
// whose run is gone or closed) is recognised like a retry, and may follow
// a closed run of any kind; "already started" means its own run is open.
func (s *Starter) startRun(ctx context.Context, o store.StartOrder) (result string, err error) {
	retry, restart := o.Kind == "retry", o.Kind == store.OutboxRestart
	switch {
	case o.InviteStatus == invite.Cancelled:
		return "skipped", nil // cancelled before its run began (SPEC §10): nothing to run
	case (retry || restart) && o.InviteStatus != invite.Pending:
		return "skipped", nil // the retry's run was started and has taken the invite over
	}
	policy := enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	switch {
	case retry:
		policy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY
	case restart:
		policy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	}
	ctx, cancel := context.WithTimeout(ctx, s.StartTimeout)
	defer cancel()
	in := workflows.InviteInput{
		EventID:           o.EventID,
		AccountID:         o.AccountID,
		EventTypeID:       o.EventTypeID,
		ChannelID:         o.ChannelID,
		CustomerReference: o.CustomerReference.String,
		Retry:             retry,
	}
	summary := fmt.Sprintf("Invite for %q event %s", o.EventType, o.EventID)
	switch {
	case in.Retry:
		summary = "Retry: " + summary
	case restart:
		summary = "Restart: " + summary
	}
	_, err = s.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    workflows.WorkflowID(o.EventID),
		TaskQueue:             workflows.TaskQueue,
		WorkflowIDReusePolicy: policy,
		// Without it the SDK answers "already started" with the existing
		// run and no error, and a retry would be marked done unstarted.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes:                    workflows.StartSearchAttributes(in),
		StaticSummary:                            summary,
	}, workflows.WorkflowType, in)
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &already) && !retry { // a start's or a restart's own run
		return "existing", nil
	}
	if err != nil {
		return "error", fmt.Errorf("start workflow %s: %w", o.EventID, err)
	}
	return "started", nil
}

// backoff grows from MinBackoff to MaxBackoff with the attempts of one
// order.
func (s *Starter) backoff(attempts int) time.Duration {
	d := s.MinBackoff
	for i := 0; i < attempts && d < s.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.MaxBackoff)
}
