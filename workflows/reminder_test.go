package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sendtime"
	"github.com/touchpoint/touchpoint/workflows"
)

// reminderRun is an invite sent at once, whose setting asks for a
// reminder after delay within window.
type reminderRun struct {
	env    *testsuite.TestWorkflowEnvironment
	r      *recorder
	sentAt time.Time
	// remindAt is what the reminder's MarkScheduled was asked for.
	remindAt time.Time
}

func newReminderRun(t *testing.T, delay string, window *sendtime.SendWindow, start ...time.Time) *reminderRun {
	t.Helper()
	env := newEnvWith(t, workflows.Options{})
	if len(start) > 0 {
		env.SetStartTime(start[0])
	}
	rr := &reminderRun{env: env, r: &recorder{env: env}}
	rr.r.loadPlan(activePlan(sendtime.Plan{ReceivedAt: env.Now(), Delay: "PT0S"}))
	rr.r.markScheduled()
	rr.r.send(func(now time.Time) (invite.State, error) {
		rr.sentAt = now
		return sent(now)
	})
	env.OnActivity(a.LoadPlan, mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindReminder}).Return(
		func(context.Context, workflows.EventInput) (invite.Plan, error) {
			return activePlan(sendtime.Plan{ReceivedAt: rr.sentAt, TransactionDate: rr.sentAt,
				Delay: delay, DelayFrom: "event", SendWindow: window}), nil
		}).Once()
	env.OnActivity(a.MarkScheduled, mock.Anything, ofKind(invite.KindReminder)).Return(
		func(_ context.Context, in workflows.MarkScheduledInput) (invite.State, error) {
			rr.remindAt = in.ScheduledFor
			return invite.State{Status: invite.Scheduled, ScheduledFor: &in.ScheduledFor}, nil
		}).Once()
	return rr
}

func TestReminderSentAfterItsDelay(t *testing.T) {
	t.Parallel()
	rr := newReminderRun(t, "P3D", nil)
	var remindedAt time.Time
	rr.env.OnActivity(a.Send, mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindReminder}).Return(
		func(context.Context, workflows.EventInput) (invite.State, error) {
			remindedAt = rr.env.Now()
			return invite.State{Status: invite.Sent, SentAt: &remindedAt}, nil
		}).Once()
	rr.env.ExecuteWorkflow(workflows.WorkflowType, input())

	res := result(t, rr.env)
	assert.Equal(t, invite.Sent, res.Status)
	require.NotNil(t, res.Reminder)
	assert.Equal(t, invite.Sent, res.Reminder.Status)
	assert.True(t, rr.sentAt.Add(72*time.Hour).Equal(rr.remindAt), "sent time + the reminder delay: %s", rr.remindAt)
	assert.WithinDuration(t, rr.remindAt, remindedAt, time.Second, "sent when the timer fired")
}

func TestReminderMovedIntoTheSendWindow(t *testing.T) {
	t.Parallel()
	rr := newReminderRun(t, "PT1H", &sendtime.SendWindow{Start: "09:00", End: "17:00", TimeZone: "UTC"}, at("2026-06-01T16:30:00Z"))
	rr.env.OnActivity(a.Send, mock.Anything, ofKind(invite.KindReminder)).Return(invite.State{Status: invite.Sent}, nil).Once()
	rr.env.ExecuteWorkflow(workflows.WorkflowType, input())
	result(t, rr.env)
	assert.True(t, at("2026-06-02T09:00:00Z").Equal(rr.remindAt), "17:30 is outside 09–17: the next opening, not %s", rr.remindAt)
}

func TestReviewBeforeTheReminderSkipsIt(t *testing.T) {
	t.Parallel()
	rr := newReminderRun(t, "P3D", nil)
	rr.env.RegisterDelayedCallback(func() {
		rr.env.SignalWorkflow(workflows.ReviewSignal, workflows.ReviewReceived{ReviewID: "rev-1"})
	}, 24*time.Hour)
	rr.env.OnActivity(a.MarkSkipped, mock.Anything,
		workflows.MarkSkippedInput{EventID: eventID, Kind: invite.KindReminder, Reason: invite.Reviewed}).Return(
		invite.State{Status: invite.Skipped, Reason: invite.Reviewed}, nil).Once()
	rr.env.ExecuteWorkflow(workflows.WorkflowType, input())

	res := result(t, rr.env)
	require.NotNil(t, res.Reminder)
	assert.Equal(t, invite.Skipped, res.Reminder.Status)
	assert.Equal(t, invite.Reviewed, res.Reminder.Reason)
	rr.env.AssertActivityNotCalled(t, "Send", mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindReminder})
}

func TestCancelStopsTheReminder(t *testing.T) {
	t.Parallel()
	rr := newReminderRun(t, "P3D", nil)
	rr.env.RegisterDelayedCallback(func() {
		rr.env.SignalWorkflow(workflows.CancelSignal, workflows.CancelRequest{Source: "api"})
	}, 24*time.Hour)
	rr.env.OnActivity(a.MarkCancelled, mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindReminder}).Return(
		invite.State{Status: invite.Cancelled}, nil).Once()
	rr.env.ExecuteWorkflow(workflows.WorkflowType, input())

	res := result(t, rr.env)
	assert.Equal(t, invite.Sent, res.Status, "the invite stays sent")
	require.NotNil(t, res.Reminder)
	assert.Equal(t, invite.Cancelled, res.Reminder.Status)
	rr.env.AssertActivityNotCalled(t, "Send", mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindReminder})
}

func TestReminderThatCannotBeDeliveredIsSkipped(t *testing.T) {
	t.Parallel()
	rr := newReminderRun(t, "P1D", nil)
	rr.env.OnActivity(a.Send, mock.Anything, ofKind(invite.KindReminder)).Return(invite.State{},
		temporal.NewNonRetryableApplicationError("rejected", workflows.ErrTypeRejected, nil)).Once()
	rr.env.OnActivity(a.MarkSkipped, mock.Anything,
		workflows.MarkSkippedInput{EventID: eventID, Kind: invite.KindReminder, Reason: invite.RetriesExhausted}).Return(
		invite.State{Status: invite.Skipped, Reason: invite.RetriesExhausted}, nil).Once()
	rr.env.ExecuteWorkflow(workflows.WorkflowType, input())

	res := result(t, rr.env)
	assert.Equal(t, invite.Sent, res.Status, "a lost reminder does not fail the run: the invite was sent")
	assert.Equal(t, invite.Skipped, res.Reminder.Status)
}

func TestReminderCancelledBeforeItWasPlanned(t *testing.T) {
	t.Parallel()
	env := newEnvWith(t, workflows.Options{})
	r := &recorder{env: env}
	r.loadPlan(activePlan(sendtime.Plan{ReceivedAt: env.Now(), Delay: "PT0S"}))
	r.markScheduled()
	r.send(sent)
	env.OnActivity(a.LoadPlan, mock.Anything, ofKind(invite.KindReminder)).Return(
		activePlan(sendtime.Plan{ReceivedAt: env.Now(), Delay: "P1D", DelayFrom: "event"}), nil).Once()
	env.OnActivity(a.MarkScheduled, mock.Anything, ofKind(invite.KindReminder)).Return(invite.State{Status: invite.Cancelled}, nil).Once()
	env.ExecuteWorkflow(workflows.WorkflowType, input())

	res := result(t, env)
	assert.Equal(t, invite.Cancelled, res.Reminder.Status, "the API cancelled it between the send and the plan")
	env.AssertActivityNotCalled(t, "Send", mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindReminder})
}

// TestRunForASentInviteGoesOnWithItsReminder: a run that finds its invite
// sent by an earlier run (the reconciler restarted it for its waiting
// reminder) sends nothing of the invite and goes on with the reminder at
// the time it was scheduled for — at once when that has passed.
func TestRunForASentInviteGoesOnWithItsReminder(t *testing.T) {
	t.Parallel()
	for name, after := range map[string]time.Duration{"due later": 2 * time.Hour, "overdue": -time.Hour} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := newEnvWith(t, workflows.Options{})
			start := at("2026-06-01T10:00:00Z")
			env.SetStartTime(start)
			sentAt, remindAt := start.Add(-72*time.Hour), start.Add(after)
			r := &recorder{env: env}
			r.loadPlan(activePlan(sendtime.Plan{ReceivedAt: sentAt, Delay: "PT0S"}))
			env.OnActivity(a.MarkScheduled, mock.Anything, ofKind(invite.KindInvite)).Return(
				invite.State{Status: invite.Sent, SentAt: &sentAt, Attempts: 1}, nil).Once()
			env.OnActivity(a.MarkScheduled, mock.Anything, ofKind(invite.KindReminder)).Return(
				invite.State{Status: invite.Scheduled, ScheduledFor: &remindAt}, nil).Once()
			var remindedAt time.Time
			env.OnActivity(a.Send, mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindReminder}).Return(
				func(context.Context, workflows.EventInput) (invite.State, error) {
					remindedAt = env.Now()
					return invite.State{Status: invite.Sent, SentAt: &remindedAt}, nil
				}).Once()
			env.ExecuteWorkflow(workflows.WorkflowType, input())

			res := result(t, env)
			assert.Equal(t, invite.Sent, res.Status)
			assert.True(t, sentAt.Equal(res.SentAt), "the invite as the earlier run sent it")
			require.NotNil(t, res.Reminder)
			assert.Equal(t, invite.Sent, res.Reminder.Status)
			want := remindAt // at its time …
			if remindAt.Before(start) {
				want = start // … or at once when that has passed
			}
			assert.True(t, want.Equal(remindedAt), "reminded at %s, want %s", remindedAt, want)
			env.AssertActivityNotCalled(t, "Send", mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindInvite})
			env.AssertActivityNotCalled(t, "LoadPlan", mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindReminder})
		})
	}
}
