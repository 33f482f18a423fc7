// Package starter turns the outbox rows written by accepted events into
// Temporal workflow starts. It runs inside `touchpoint api`, woken at once
// by LISTEN/NOTIFY and by a periodic sweep, and is safe with any number of
// API replicas: each batch of rows is locked with FOR UPDATE SKIP LOCKED
// until its starts are done. It gives way to the accepts of its own
// process through a giveway.Gate, handing back the rows it holds.
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

	"github.com/touchpoint/touchpoint/internal/giveway"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/workflows"
)

// Outbox is where the starter claims its start orders.
type Outbox interface {
	ClaimOutbox(ctx context.Context, limit int) (*eventdb.OutboxBatch, error)
}

// Starter starts one invite workflow per outbox row.
type Starter struct {
	Outbox   Outbox
	Temporal client.Client
	Logger   *slog.Logger
	// DatabaseURL is used for the LISTEN connection.
	DatabaseURL string
	// Metrics counts the starts. Optional.
	Metrics *metrics.Set
	// Gate, when set, makes the starter give way to the accept path of its
	// process: starts wait while accepts crowd in, never longer than the
	// gate's MaxHold after their order was written. Optional.
	Gate *giveway.Gate
	// Tuning paces the starter; its Sweep, the backstop interval when no
	// notification arrives, defaults to 5 s.
	Tuning
}

// Run starts workflows until ctx is cancelled. Rows being started when it
// stops are handed back untouched.
func (s *Starter) Run(ctx context.Context) error {
	s.defaults(5 * time.Second)
	listener := eventdb.ListenOutbox(s.DatabaseURL, s.Logger)
	defer listener.Close()
	p := pump[eventdb.StartOrder]{what: "outbox", logger: s.Logger, tuning: &s.Tuning, claim: s.claim, start: s.start,
		gate: s.Gate, since: func(o eventdb.StartOrder) time.Time { return o.CreatedAt }}
	return p.run(ctx, listener.Wake())
}

// claim claims a batch of due start orders.
func (s *Starter) claim(ctx context.Context, limit int) (claimed[eventdb.StartOrder], error) {
	b, err := s.Outbox.ClaimOutbox(ctx, limit)
	if err != nil {
		return claimed[eventdb.StartOrder]{}, err
	}
	finish := func(ctx context.Context, ok []eventdb.StartOrder, failed []failedStart[eventdb.StartOrder]) error {
		done := make([]int64, len(ok))
		for i, o := range ok {
			done[i] = o.ID
		}
		retries := make([]eventdb.Retry, len(failed))
		for i, f := range failed {
			retries[i] = eventdb.Retry{ID: f.item.ID, After: s.backoff(f.item.Attempts), Error: f.err.Error()}
		}
		return b.Finish(ctx, done, retries)
	}
	return claimed[eventdb.StartOrder]{items: b.Orders, finish: finish, release: b.Release}, nil
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
func (s *Starter) start(ctx context.Context, o eventdb.StartOrder) error {
	result, err := s.startRun(ctx, o)
	s.Metrics.WorkflowStart(string(o.Kind), result)
	return err
}

// startRun starts the run and says how it went: started, existing (the
// run was there already), skipped (nothing to run) or error.
//
// A restart (invite.RunRestart, ordered by the reconciler for an invite
// whose run is gone or closed) is recognised like a retry, and may follow
// a closed run of any kind; "already started" means its own run is open.
// A restart of a sent invite is its waiting reminder's: the new run goes
// on with the reminder, and is started while the reminder still waits.
func (s *Starter) startRun(ctx context.Context, o eventdb.StartOrder) (result string, err error) {
	retry, restart := o.Kind == invite.RunRetry, o.Kind == invite.RunRestart
	switch {
	case o.InviteStatus == invite.Cancelled:
		return "skipped", nil // cancelled before its run began: nothing to run
	case restart && o.InviteStatus == invite.Sent:
		if o.ReminderStatus != invite.Scheduled {
			return "skipped", nil // the reminder's run has sent it, or it ended otherwise
		}
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
