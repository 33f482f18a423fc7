package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sendtime"
)

// reminderChange is the workflow.GetVersion change ID of the reminder:
// runs that sent their invite before it existed end there.
const reminderChange = "reminder"

// remind runs the reminder phase of a run whose invite is sent: it plans
// the reminder from the setting (none configured: the run ends), waits
// for its time — or for a review or a cancel, which end it — and sends it
// at most once. The invite stays sent whatever happens here.
func (w *inviteRun) remind(ctx workflow.Context) (InviteResult, error) {
	if !w.lean && workflow.GetVersion(ctx, reminderChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return w.state, nil
	}
	if ctx.Err() != nil {
		return w.state, nil // the run was asked to cancel while it sent: no reminder
	}
	// Cancels that came while the invite was being sent were for the
	// invite, which went out: they do not cancel a reminder planned now.
	w.dropLateCancels(ctx)

	at := workflow.Now(ctx)
	if !w.resumed {
		plan, due, err := w.reminderPlan(ctx)
		if err != nil {
			return w.reminderStopped(ctx, err)
		}
		if !due {
			return w.state, nil
		}
		now := at
		resolve := func(workflow.Context) any { return sendtime.SendTime(now, plan) }
		if err := workflow.SideEffect(ctx, resolve).Get(&at); err != nil {
			return w.state, err
		}
	}
	// A resumed run's reminder was planned by the run that sent the
	// invite: this step answers with it as it is, and it keeps its time.
	rem, err := w.reminderStep(ctx, MarkScheduledActivity, MarkScheduledInput{EventID: w.in.EventID, Kind: invite.KindReminder, ScheduledFor: at})
	if err != nil {
		return w.reminderStopped(ctx, err)
	}
	if rem.Status != invite.Scheduled {
		return w.reminderDone(ctx, rem) // cancelled by the API meanwhile
	}
	w.setReminder(ctx, rem)
	wait := at.Sub(workflow.Now(ctx))
	if w.resumed && rem.ScheduledFor != nil {
		wait = max(rem.ScheduledFor.Sub(workflow.Now(ctx)), 0) // due already: at once
	}

	timerCtx, stopTimer := workflow.WithCancel(ctx)
	defer stopTimer()
	var (
		timerErr          error
		reviewed, stopped bool
	)
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(workflow.NewTimerWithOptions(timerCtx, wait, workflow.TimerOptions{Summary: "until the reminder"}),
		func(f workflow.Future) { timerErr = f.Get(ctx, nil) })
	sel.AddReceive(w.review, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		reviewed = true
	})
	sel.AddReceive(w.cancel, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		stopped = true
	})
	sel.Select(ctx)
	switch {
	case reviewed:
		rem, err = w.reminderStep(ctx, MarkSkippedActivity, MarkSkippedInput{EventID: w.in.EventID, Kind: invite.KindReminder, Reason: invite.Reviewed})
	case stopped:
		rem, err = w.reminderStep(ctx, MarkCancelledActivity, EventInput{EventID: w.in.EventID, Kind: invite.KindReminder})
	case timerErr != nil:
		return w.reminderStopped(ctx, timerErr)
	default:
		rem, err = w.sendReminder(ctx)
	}
	if err != nil {
		return w.state, err
	}
	return w.reminderDone(ctx, rem)
}

// reminderPlan loads what the reminder starts from, and whether one is
// due at all (none configured: not).
func (w *inviteRun) reminderPlan(ctx workflow.Context) (plan sendtime.Plan, due bool, err error) {
	name := w.stepName(invite.KindReminder, LoadPlanActivity)
	in := EventInput{EventID: w.in.EventID, Kind: invite.KindReminder}
	if w.legacy { // the step of that time answered with an invite.ReminderPlan
		var p invite.ReminderPlan
		err = workflow.ExecuteLocalActivity(w.local(ctx), name, in).Get(ctx, &p)
		return p.Plan, p.Delay != "", err
	}
	var p invite.Plan
	err = workflow.ExecuteLocalActivity(w.local(ctx), name, in).Get(ctx, &p)
	return p.Plan, p.Plan.Delay != "", err
}

// sendReminder delivers the reminder with the invite's send step and retry
// policy; a reminder that cannot be delivered in time is skipped (the run
// does not fail: its invite was sent).
func (w *inviteRun) sendReminder(ctx workflow.Context) (invite.Reminder, error) {
	st, err := w.deliver(ctx, invite.KindReminder)
	return st.Reminder(), err
}

// reminderStopped handles an error of the reminder phase: a cancel request
// of the run cancels the reminder and ends the run Cancelled.
func (w *inviteRun) reminderStopped(ctx workflow.Context, err error) (InviteResult, error) {
	if !temporal.IsCanceledError(err) {
		return w.state, err
	}
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	rem, serr := w.reminderStep(ctx, MarkCancelledActivity, EventInput{EventID: w.in.EventID, Kind: invite.KindReminder})
	if serr != nil {
		return w.state, serr
	}
	res, _ := w.reminderDone(ctx, rem)
	return res, temporal.NewCanceledError()
}

// reminderDone publishes the reminder's final state.
func (w *inviteRun) reminderDone(ctx workflow.Context, rem invite.Reminder) (InviteResult, error) {
	w.setReminder(ctx, rem)
	if rem.Status != "" {
		workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"status": string(rem.Status), "reason": string(rem.Reason)}).
			Counter(RemindersMetric).Inc(1)
	}
	return w.state, nil
}

// setReminder publishes the reminder's state to the status query and the
// current details.
func (w *inviteRun) setReminder(ctx workflow.Context, rem invite.Reminder) {
	if rem.Status == "" {
		return
	}
	w.state.Reminder = &rem
	workflow.SetCurrentDetails(ctx, details(w.state))
}

// reminderStep runs a database step of the reminder as a local activity.
func (w *inviteRun) reminderStep(ctx workflow.Context, step string, in any) (invite.Reminder, error) {
	st, err := w.step(ctx, invite.KindReminder, step, in)
	return st.Reminder(), err
}
