package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/workflows"
)

// WorkflowDescriber is the part of the Temporal client the reconciler
// uses: it asks whether an invite's workflow still runs.
type WorkflowDescriber interface {
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
}

// DefaultReconcileGrace is how long an invite may sit past its send time,
// or unchanged while pending or sending, before the reconciler checks its
// workflow. It must exceed the send timeout: a send in progress is
// `sending` for up to that long.
const DefaultReconcileGrace = 10 * time.Minute

// StuckSends is what the reconciler reads and repairs of the sends
// (store/invitedb), and the clock its grace period counts from.
type StuckSends interface {
	Now() time.Time
	StuckCandidates(ctx context.Context, cutoff time.Time, cur invitedb.StuckCursor, limit int) ([]invitedb.StuckCandidate, invitedb.StuckCursor, error)
	RestartInvite(ctx context.Context, eventID string, seen invite.Status) (bool, error)
	RestartReminder(ctx context.Context, eventID string) (bool, error)
	AbandonSend(ctx context.Context, k invite.Kind, eventID, why string) (bool, error)
}

// Reconciler holds the reconciler's step (workflows.Reconcile): it is an
// activity struct of its own, as it needs a Temporal client the invite
// steps must not have.
type Reconciler struct {
	Store StuckSends
	// Outbox is woken when a repair ordered a new run.
	Outbox   interface{ Notify(context.Context) error }
	Temporal WorkflowDescriber
	// Grace: see DefaultReconcileGrace (0 means it).
	Grace time.Duration
	// PageSize candidates are read at a time; 0 means 200.
	PageSize int
	// DescribeTimeout bounds one question to Temporal; 0 means 10 s.
	DescribeTimeout time.Duration
	Logger          *slog.Logger // nil: discard
}

// reconcileProgress is the heartbeat of ReconcileInvites: where a retried
// attempt resumes, and what was done so far.
type reconcileProgress struct {
	Cursor invitedb.StuckCursor
	Result workflows.ReconcileResult
}

// ReconcileInvites finds the sends that should have moved by now — an
// invite scheduled past its send time, pending without an open start
// order, or sending; the reminder of a sent invite scheduled past its
// time, or sending; each for longer than the grace period — and asks
// Temporal about each one's workflow (ID = event ID). A running workflow
// is only late and is left alone. For one that is gone or closed, a
// pending or scheduled invite gets a new run through the outbox (a
// restart order, which keeps the event's schedule), a scheduled reminder
// likewise (the new run finds the invite sent and goes on with the
// reminder at its time), and a sending invite fails — a sending reminder
// is skipped — as delivery_uncertain: its send may have happened, so it
// is never sent again by itself. Each repair re-checks the send under its
// row lock, so one that moved meanwhile is left alone.
func (r *Reconciler) ReconcileInvites(ctx context.Context, in workflows.ReconcileInput) (workflows.ReconcileResult, error) {
	grace := r.Grace
	if in.Grace > 0 {
		grace = in.Grace
	} else if grace <= 0 {
		grace = DefaultReconcileGrace
	}
	pageSize := r.PageSize
	if pageSize <= 0 {
		pageSize = 200
	}
	log := r.logger()

	var p reconcileProgress
	if activity.IsActivity(ctx) && activity.HasHeartbeatDetails(ctx) {
		if err := activity.GetHeartbeatDetails(ctx, &p); err != nil {
			log.WarnContext(ctx, "reconciler: cannot resume; starting over", "error", err)
			p = reconcileProgress{}
		}
	}
	cutoff := r.Store.Now().Add(-grace)
	for {
		page, next, err := r.Store.StuckCandidates(ctx, cutoff, p.Cursor, pageSize)
		if err != nil {
			return p.Result, err
		}
		for _, c := range page {
			if err := r.reconcile(ctx, c, &p.Result); err != nil {
				return p.Result, err
			}
			// A retried attempt goes on after the last candidate checked.
			p.Cursor = invitedb.StuckCursor{Phase: next.Phase, Since: c.Since, ID: c.EventID}
			heartbeat(ctx, p)
		}
		p.Cursor = next
		heartbeat(ctx, p)
		if next.Done() {
			break
		}
	}
	if p.Result.Restarted > 0 {
		// Wakes the outbox starters of the API at once; they also sweep.
		if err := r.Outbox.Notify(ctx); err != nil {
			log.WarnContext(ctx, "reconciler: notify starters", "error", err)
		}
	}
	if res := p.Result; res.Restarted+res.Uncertain > 0 {
		log.WarnContext(ctx, "reconciler repaired stuck invites", "candidates", res.Candidates, "restarted", res.Restarted,
			"uncertain", res.Uncertain, "running", res.Running, "moved", res.Moved)
	} else {
		log.InfoContext(ctx, "reconciler found nothing stuck", "candidates", res.Candidates, "running", res.Running)
	}
	return p.Result, nil
}

// heartbeat records progress when ctx is an activity's (tests call the
// step directly); the SDK sends at most one heartbeat per interval.
func heartbeat(ctx context.Context, p reconcileProgress) {
	if activity.IsActivity(ctx) {
		activity.RecordHeartbeat(ctx, p)
	}
}

// reconcile checks one candidate and repairs it if its workflow is gone
// or closed.
func (r *Reconciler) reconcile(ctx context.Context, c invitedb.StuckCandidate, res *workflows.ReconcileResult) error {
	res.Candidates++
	open, state, err := r.workflowOpen(ctx, c.EventID)
	if err != nil {
		return fmt.Errorf("reconcile %s: %w", c.EventID, err)
	}
	if open {
		res.Running++
		return nil
	}
	log := r.logger().With("event_id", c.EventID, "kind", c.Kind, "status", c.Status, "workflow", state)
	var changed bool
	switch {
	case c.Status == invite.Sending:
		changed, err = r.Store.AbandonSend(ctx, c.Kind, c.EventID, "its workflow is "+state)
	case c.Kind == invite.KindReminder:
		changed, err = r.Store.RestartReminder(ctx, c.EventID)
	default:
		changed, err = r.Store.RestartInvite(ctx, c.EventID, c.Status)
	}
	switch {
	case err != nil:
		return fmt.Errorf("reconcile %s %s: %w", c.Kind, c.EventID, err)
	case !changed:
		res.Moved++
	case c.Status == invite.Sending:
		res.Uncertain++
		log.WarnContext(ctx, "reconciler: a send was interrupted with its workflow; given up as delivery_uncertain")
	default:
		res.Restarted++
		log.WarnContext(ctx, "reconciler: "+string(c.Kind)+" restarted through the outbox")
	}
	return nil
}

// workflowOpen asks Temporal whether the event's workflow runs; state
// says what it found otherwise ("missing", "terminated", …).
func (r *Reconciler) workflowOpen(ctx context.Context, eventID string) (open bool, state string, err error) {
	timeout := r.DescribeTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d, err := r.Temporal.DescribeWorkflowExecution(dctx, workflows.WorkflowID(eventID), "")
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		return false, "missing", nil
	case err != nil:
		return false, "", err
	}
	status := d.GetWorkflowExecutionInfo().GetStatus()
	if status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return true, "running", nil
	}
	return false, closedName(status), nil
}

// closedName is a closed workflow status in words: "terminated".
func closedName(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return "completed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return "failed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "cancelled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed out"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return "continued as new"
	}
	return "closed (" + s.String() + ")"
}

func (r *Reconciler) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.New(slog.DiscardHandler)
}
