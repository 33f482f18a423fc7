// Package reconciler keeps the Temporal Schedule that runs the reconciler
// (workflows.Reconcile) in place: `touchpoint migrate` and `touchpoint
// dev` create it, or bring an existing one to the configured interval,
// idempotently. Why a Schedule and not a lock loop is written beside the
// workflow (workflows/reconcile.go); what a run does, beside its step
// (activities/reconcile.go).
package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/touchpoint/touchpoint/workflows"
)

// DefaultInterval is how often the reconciler runs.
const DefaultInterval = 5 * time.Minute

// Result says what EnsureSchedule did.
type Result string

// Results of EnsureSchedule.
const (
	Created  Result = "created"
	Updated  Result = "updated"
	UpToDate Result = "up to date"
)

// scheduleNote is shown with the schedule in the Temporal UI.
const scheduleNote = "Touchpoint's reconciler: restarts invites whose workflow is gone or closed. " +
	"Pausing it is safe; invites are then only repaired once it runs again."

// EnsureSchedule creates the reconciler's schedule (ID
// workflows.ReconcileScheduleID) running every interval on the invites
// task queue, one run at a time (a run still going when the next is due
// makes that one skip), or brings an existing one to that interval and
// action. A schedule paused by ops stays paused. interval 0 means
// DefaultInterval.
func EnsureSchedule(ctx context.Context, c client.Client, interval time.Duration) (Result, error) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if interval < time.Second {
		return "", fmt.Errorf("reconciler interval %s: at least 1s", interval)
	}
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: interval}}}
	sc := c.ScheduleClient()
	_, err := sc.Create(ctx, client.ScheduleOptions{
		ID:      workflows.ReconcileScheduleID,
		Spec:    spec,
		Action:  action(),
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		// After an outage one run catches up, not one per missed interval.
		CatchupWindow: interval,
		Note:          scheduleNote,
	})
	switch {
	case err == nil:
		return Created, nil
	case !errors.Is(err, temporal.ErrScheduleAlreadyRunning):
		return "", fmt.Errorf("create schedule %s: %w", workflows.ReconcileScheduleID, err)
	}

	result := UpToDate
	err = sc.GetHandle(ctx, workflows.ReconcileScheduleID).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			s := in.Description.Schedule
			if upToDate(s, interval) {
				return nil, temporal.ErrSkipScheduleUpdate
			}
			result = Updated
			s.Spec = &spec
			s.Action = action()
			if s.Policy == nil {
				s.Policy = &client.SchedulePolicies{}
			}
			s.Policy.Overlap = enumspb.SCHEDULE_OVERLAP_POLICY_SKIP
			s.Policy.CatchupWindow = interval
			return &client.ScheduleUpdate{Schedule: &s}, nil
		},
	})
	if err != nil {
		return "", fmt.Errorf("update schedule %s: %w", workflows.ReconcileScheduleID, err)
	}
	return result, nil
}

// action is what each scheduled time starts: a reconciler run.
func action() *client.ScheduleWorkflowAction {
	return &client.ScheduleWorkflowAction{
		ID:        workflows.ReconcileScheduleID,
		Workflow:  workflows.ReconcileWorkflowType,
		Args:      []any{workflows.ReconcileInput{}},
		TaskQueue: workflows.TaskQueue,
		// A run that cannot finish in a day is stuck itself; the next
		// scheduled one starts afresh.
		WorkflowExecutionTimeout: 24 * time.Hour,
		StaticSummary:            "Reconciler: restart invites whose workflow is gone or closed",
	}
}

// upToDate reports whether a schedule already runs the reconciler every
// interval, one run at a time.
func upToDate(s client.Schedule, interval time.Duration) bool {
	a, ok := s.Action.(*client.ScheduleWorkflowAction)
	if !ok || s.Spec == nil || s.Policy == nil {
		return false
	}
	wf, _ := a.Workflow.(string)
	return len(s.Spec.Intervals) == 1 && s.Spec.Intervals[0].Every == interval && s.Spec.Intervals[0].Offset == 0 &&
		len(s.Spec.Calendars) == 0 && len(s.Spec.CronExpressions) == 0 &&
		wf == workflows.ReconcileWorkflowType && a.TaskQueue == workflows.TaskQueue &&
		s.Policy.Overlap == enumspb.SCHEDULE_OVERLAP_POLICY_SKIP
}
