package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The reconciler finds invites stuck pending, scheduled or sending, and
// reminders of sent invites stuck scheduled or sending, whose workflow is
// gone or closed — terminated, lost with a namespace reset or with
// Temporal's state — and repairs them through PostgreSQL: a new run
// ordered through the outbox (for a reminder, a run that finds the invite
// sent and goes on with the reminder), or, for a send that was
// interrupted, the verdict delivery_uncertain (never a second send).
//
// It runs as a small workflow started by a Temporal Schedule
// (ReconcileScheduleID) every few minutes on the invites task queue. A
// Schedule rather than a loop in every worker holding an advisory lock:
// the Schedule starts one run at a time by construction (overlap: skip)
// whatever the number of workers, each run is a workflow whose result and
// failures are visible in the Temporal UI beside the invites, ops can
// pause it, trigger it or change its interval there, and a run cut off
// with its worker is retried by Temporal — none of which a lock loop gives
// without code of its own. The price is that it needs Temporal, which is
// fine: without Temporal nothing could be restarted anyway.

// ReconcileWorkflowType is the registered name of the reconciler workflow.
const ReconcileWorkflowType = "Reconcile"

// ReconcileScheduleID is the ID of the Temporal Schedule that starts the
// reconciler; its runs' workflow IDs start with it.
const ReconcileScheduleID = "touchpoint-reconciler"

// ReconcileInvitesActivity is the reconciler's one step: it scans
// PostgreSQL for candidates, asks Temporal about each one's workflow and
// repairs the stuck ones. Registered from activities.Reconciler.
const ReconcileInvitesActivity = "ReconcileInvites"

// ReconcileInput is the input of a reconciler run.
type ReconcileInput struct {
	// Grace overrides the worker's grace period (how long an invite may
	// sit past its send time, or unchanged while pending or sending,
	// before it is a candidate); 0 keeps the worker's.
	Grace time.Duration `json:",omitempty"`
}

// ReconcileResult counts what a run found and did.
type ReconcileResult struct {
	// Candidates were checked with Temporal.
	Candidates int
	// Running had a running workflow: late, not stuck.
	Running int
	// Restarted got a new run ordered through the outbox.
	Restarted int
	// Uncertain were left sending: now given up as delivery_uncertain
	// (an invite failed, a reminder skipped).
	Uncertain int
	// Moved changed while they were checked, and were left alone.
	Moved int
}

// The bounds of the reconciler's step: a scan may take long on a large
// backlog, so it proves it is alive by heartbeats instead.
const (
	reconcileTimeout   = time.Hour
	reconcileHeartbeat = time.Minute
)

// Reconcile is the reconciler workflow: one heartbeating activity that
// resumes where a cut-off attempt stopped. It is deterministic and does
// no I/O; a failed run is visible as Failed in the Temporal UI and the
// next scheduled run tries again.
func Reconcile(ctx workflow.Context, in ReconcileInput) (ReconcileResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: reconcileTimeout,
		HeartbeatTimeout:    reconcileHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    10 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
			MaximumAttempts:    3,
		},
		Summary: "find invites whose workflow is gone or closed, and restart them",
	})
	var res ReconcileResult
	if err := workflow.ExecuteActivity(ctx, ReconcileInvitesActivity, in).Get(ctx, &res); err != nil {
		return res, err
	}
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("Checked %d invites: %d restarted, %d failed as delivery_uncertain, %d still running, %d moved meanwhile",
		res.Candidates, res.Restarted, res.Uncertain, res.Running, res.Moved))
	return res, nil
}
