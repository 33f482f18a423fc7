package worker_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testactivities"
	"github.com/touchpoint/touchpoint/internal/testworkflow"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/worker"
	"github.com/touchpoint/touchpoint/workflows"
)

// recorder is a Registry that notes what is registered, by the names the
// SDK gives them: a workflow by its option's name, an activity struct by
// each of its exported methods.
type recorder struct{ workflows, activities []string }

func (r *recorder) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	r.workflows = append(r.workflows, o.Name)
}

func (r *recorder) RegisterActivity(a any) {
	t := reflect.TypeOf(a)
	for i := range t.NumMethod() {
		r.activities = append(r.activities, t.Method(i).Name)
	}
}

func (r *recorder) RegisterActivityWithOptions(_ any, o activity.RegisterOptions) {
	r.activities = append(r.activities, o.Name)
}

// TestRegisterCoversTheContract: the workflow calls its steps by name, so a
// renamed activity method would only show when an invite runs. Every name
// of the contract must be registered.
func TestRegisterCoversTheContract(t *testing.T) {
	t.Parallel()
	var r recorder
	worker.Register(&r, &activities.Activities{}, workflows.Options{})
	assert.Equal(t, []string{workflows.WorkflowType, workflows.TestSendWorkflowType}, r.workflows)
	for _, name := range []string{workflows.LoadPlanActivity, workflows.MarkScheduledActivity, workflows.MarkSkippedActivity,
		workflows.MarkCancelledActivity, workflows.MarkFailedActivity, workflows.RecordSentActivity, workflows.SendActivity,
		workflows.SendTemplateTestActivity,
		// The step names of runs begun before the one send pipeline.
		workflows.SendInviteActivity, workflows.LoadReminderPlanActivity, workflows.MarkReminderScheduledActivity,
		workflows.MarkReminderSkippedActivity, workflows.MarkReminderCancelledActivity, workflows.RecordReminderSentActivity,
		workflows.SendReminderActivity} {
		assert.Contains(t, r.activities, name)
	}
	seen := map[string]bool{}
	for _, name := range r.activities {
		assert.False(t, seen[name], "%s is registered twice", name)
		seen[name] = true
	}
}

// TestInviteEndToEnd runs the registered workflow with the real activities
// — PostgreSQL, templates, a real SMTP server — in the SDK's test
// environment, whose timers are virtual.
func TestInviteEndToEnd(t *testing.T) {
	t.Parallel()
	wired := testactivities.New(t)
	db, srv, acts := wired.DB, wired.SMTP, wired.Acts

	run := func(in workflows.InviteInput) (*testsuite.TestWorkflowEnvironment, workflows.InviteResult, error) {
		env := testworkflow.New()
		worker.Register(env, acts, workflows.Options{})
		env.ExecuteWorkflow(workflows.WorkflowType, in)
		require.True(t, env.IsWorkflowCompleted())
		var res workflows.InviteResult
		if err := env.GetWorkflowError(); err != nil {
			return env, res, err
		}
		require.NoError(t, env.GetWorkflowResult(&res))
		return env, res, nil
	}

	a := eventfixture.NewAccount(t, db, eventfixture.Setting{Delay: "PT1H", MinDays: 30})
	in := workflows.InviteInput{EventID: a.Event(t, eventfixture.Event{FirstName: "Jane"}), AccountID: a.AccountID,
		EventTypeID: a.EventTypeID, ChannelID: a.ChannelID}
	env, res, err := run(in)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, res.Status)
	assert.Equal(t, 1, res.Attempts)
	assert.WithinDuration(t, res.ScheduledFor, env.Now(), time.Second, "sent when the timer fired")
	require.Len(t, srv.Messages(), 1)
	st, err := wired.Store.Invites.LoadInviteState(t.Context(), in.EventID)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, st.Status)

	// A second event to the same address within 30 days is throttled.
	in.EventID = a.Event(t, eventfixture.Event{})
	_, res, err = run(in)
	require.NoError(t, err)
	assert.Equal(t, invite.Skipped, res.Status)
	assert.Equal(t, invite.RecentlyInvited, res.Reason)

	// A refused address fails the invite and the run, and goes on the
	// account's suppression list (bounced). A retry does not lift that:
	// the new run (Retry: true) ends skipped, until the shop lifts the
	// suppression.
	other := eventfixture.NewAccount(t, db, eventfixture.Setting{Delay: "P1D"})
	in = workflows.InviteInput{EventID: other.Event(t, eventfixture.Event{}), AccountID: other.AccountID,
		EventTypeID: other.EventTypeID, ChannelID: other.ChannelID}
	srv.FailRCPT(1, 550)
	_, _, err = run(in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rejected")
	st, err = wired.Store.Invites.LoadInviteState(t.Context(), in.EventID)
	require.NoError(t, err)
	assert.Equal(t, invite.Failed, st.Status)

	in.Retry = true
	_, res, err = run(in)
	require.NoError(t, err)
	assert.Equal(t, invite.Skipped, res.Status)
	assert.Equal(t, invite.Suppressed, res.Reason)
	assert.Len(t, srv.Messages(), 1)

	require.NoError(t, wired.Store.Suppressions.LiftSuppression(t.Context(), other.AccountID, "jane.doe@example.com", suppressiondb.ActorOperator, true))
	in = workflows.InviteInput{EventID: other.Event(t, eventfixture.Event{}), AccountID: other.AccountID,
		EventTypeID: other.EventTypeID, ChannelID: other.ChannelID}
	_, res, err = run(in)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, res.Status, "once lifted, the address gets invites again")
	assert.Len(t, srv.Messages(), 2)
}

// steps is a Registry that keeps the functions registered by name.
type steps map[string]any

func (steps) RegisterWorkflowWithOptions(any, workflow.RegisterOptions)       {}
func (steps) RegisterActivity(any)                                            {}
func (s steps) RegisterActivityWithOptions(a any, o activity.RegisterOptions) { s[o.Name] = a }

// TestLegacyStepsAnswerAsTheyDid: a run begun before the one send
// pipeline calls the per-kind steps of its time, whose results it decodes
// in their old shapes. Each name does what it did, on the real database
// and a real SMTP server.
func TestLegacyStepsAnswerAsTheyDid(t *testing.T) {
	t.Parallel()
	wired := testactivities.New(t)
	db, srv, acts := wired.DB, wired.SMTP, wired.Acts
	s := steps{}
	worker.Register(s, acts, workflows.Options{})
	ctx := t.Context()

	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	a.Set(t, "reminder_delay", "P3D")
	id := a.Event(t, eventfixture.Event{})
	in := workflows.EventInput{EventID: id} // recorded without a kind

	// The invite, by the old name of its send step.
	_, err := acts.MarkScheduled(ctx, workflows.MarkScheduledInput{EventID: id, ScheduledFor: time.Now()})
	require.NoError(t, err)
	st, err := s[workflows.SendInviteActivity].(func(context.Context, workflows.EventInput) (invite.State, error))(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, st.Status)
	require.Len(t, srv.Messages(), 1)

	// Its reminder, by the reminder's names.
	plan, err := s[workflows.LoadReminderPlanActivity].(func(context.Context, workflows.EventInput) (invite.ReminderPlan, error))(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, "P3D", plan.Delay)
	assert.Equal(t, "P3D", plan.Plan.Delay)
	at := time.Now().UTC().Truncate(time.Millisecond)
	rem, err := s[workflows.MarkReminderScheduledActivity].(func(context.Context, workflows.MarkScheduledInput) (invite.Reminder, error))(
		ctx, workflows.MarkScheduledInput{EventID: id, ScheduledFor: at})
	require.NoError(t, err)
	assert.Equal(t, invite.Reminder{Status: invite.Scheduled, ScheduledFor: &at}, rem)
	st, err = wired.Store.Invites.LoadInviteState(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, st.Status, "the invite stays sent")
	rem, err = s[workflows.SendReminderActivity].(func(context.Context, workflows.EventInput) (invite.Reminder, error))(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, rem.Status)
	require.Len(t, srv.Messages(), 2)
	m, err := srv.Messages()[1].Parse()
	require.NoError(t, err)
	assert.Equal(t, "<"+id+".reminder@touchpoint.example>", m.Header.Get("Message-Id"), "the reminder, not the invite again")
	rem, err = s[workflows.RecordReminderSentActivity].(func(context.Context, workflows.RecordSentInput) (invite.Reminder, error))(
		ctx, workflows.RecordSentInput{EventID: id, SentAt: time.Now()})
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, rem.Status, "recorded once")

	// Skipped and cancelled reminders of two more sent invites.
	for _, tc := range []struct {
		name string
		call func(id string) (invite.Reminder, error)
		want invite.Status
	}{
		{workflows.MarkReminderSkippedActivity, func(id string) (invite.Reminder, error) {
			return s[workflows.MarkReminderSkippedActivity].(func(context.Context, workflows.MarkSkippedInput) (invite.Reminder, error))(
				ctx, workflows.MarkSkippedInput{EventID: id, Reason: invite.Reviewed})
		}, invite.Skipped},
		{workflows.MarkReminderCancelledActivity, func(id string) (invite.Reminder, error) {
			return s[workflows.MarkReminderCancelledActivity].(func(context.Context, workflows.EventInput) (invite.Reminder, error))(
				ctx, workflows.EventInput{EventID: id})
		}, invite.Cancelled},
	} {
		id := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: time.Now()})
		_, err := acts.MarkScheduled(ctx, workflows.MarkScheduledInput{EventID: id, Kind: invite.KindReminder, ScheduledFor: at})
		require.NoError(t, err)
		rem, err := tc.call(id)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, rem.Status, tc.name)
		inv, err := wired.Store.Invites.LoadInviteState(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, invite.Sent, inv.Status, "%s: the invite stays sent", tc.name)
	}
	assert.Len(t, srv.Messages(), 2)
}
