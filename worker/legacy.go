package worker

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/workflows"
)

// legacyStep is a step name of the runs begun before invite and reminder
// shared one send pipeline, and the code that now answers to it.
type legacyStep struct {
	name string
	fn   any
}

// legacySteps map the per-kind step names of those runs onto the one
// pipeline's steps, with the kind fixed and the result in the shape that
// name answered with then. A run waiting on a timer when the worker was
// upgraded replays its history and goes on calling them; the replay
// tests over the histories recorded before check that they still replay.
func legacySteps(acts *activities.Activities) []legacyStep {
	const reminder = invite.KindReminder
	return []legacyStep{
		{workflows.SendInviteActivity, func(ctx context.Context, in workflows.EventInput) (invite.State, error) {
			in.Kind = invite.KindInvite
			return acts.Send(ctx, in)
		}},
		{workflows.LoadReminderPlanActivity, func(ctx context.Context, in workflows.EventInput) (invite.ReminderPlan, error) {
			in.Kind = reminder
			p, err := acts.LoadPlan(ctx, in)
			return invite.ReminderPlan{Delay: p.Plan.Delay, Plan: p.Plan}, err
		}},
		{workflows.MarkReminderScheduledActivity, func(ctx context.Context, in workflows.MarkScheduledInput) (invite.Reminder, error) {
			in.Kind = reminder
			st, err := acts.MarkScheduled(ctx, in)
			return st.Reminder(), err
		}},
		{workflows.MarkReminderSkippedActivity, func(ctx context.Context, in workflows.MarkSkippedInput) (invite.Reminder, error) {
			in.Kind = reminder
			st, err := acts.MarkSkipped(ctx, in)
			return st.Reminder(), err
		}},
		{workflows.MarkReminderCancelledActivity, func(ctx context.Context, in workflows.EventInput) (invite.Reminder, error) {
			in.Kind = reminder
			st, err := acts.MarkCancelled(ctx, in)
			return st.Reminder(), err
		}},
		{workflows.RecordReminderSentActivity, func(ctx context.Context, in workflows.RecordSentInput) (invite.Reminder, error) {
			in.Kind = reminder
			st, err := acts.RecordSent(ctx, in)
			return st.Reminder(), err
		}},
		{workflows.SendReminderActivity, func(ctx context.Context, in workflows.EventInput) (invite.Reminder, error) {
			in.Kind = reminder
			st, err := acts.Send(ctx, in)
			return st.Reminder(), err
		}},
	}
}

// registerLegacySteps registers every legacy step under its old name.
func registerLegacySteps(r Registry, acts *activities.Activities) {
	for _, s := range legacySteps(acts) {
		r.RegisterActivityWithOptions(s.fn, activity.RegisterOptions{Name: s.name})
	}
}
