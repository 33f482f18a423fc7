package worker_test

import (
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/templates"
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

// TestRegisterCoversTheContract: the workflow calls its steps by name, so a
// renamed activity method would only show when an invite runs. Every name
// of the contract must be registered.
func TestRegisterCoversTheContract(t *testing.T) {
	t.Parallel()
	var r recorder
	worker.Register(&r, &activities.Activities{}, workflows.Options{})
	assert.Equal(t, []string{workflows.WorkflowType, workflows.TestSendWorkflowType}, r.workflows)
	for _, name := range []string{workflows.LoadPlanActivity, workflows.MarkScheduledActivity, workflows.MarkSkippedActivity,
		workflows.MarkCancelledActivity, workflows.MarkFailedActivity, workflows.RecordSentActivity, workflows.SendInviteActivity,
		workflows.SendTemplateTestActivity} {
		assert.Contains(t, r.activities, name)
	}
}

// TestInviteEndToEnd runs the registered workflow with the real activities
// — PostgreSQL, templates, a real SMTP server — in the SDK's test
// environment, whose timers are virtual.
func TestInviteEndToEnd(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	srv := smtptest.Start(t, smtptest.Options{})
	mailer, err := mail.NewSMTP(srv.URL(), "Touchpoint <invites@touchpoint.example>", mail.SMTPOptions{})
	require.NoError(t, err)
	tpl, err := templates.New()
	require.NoError(t, err)
	links, err := signedlink.New("https://touchpoint.example/feedback", []byte("a feedback key of 32 bytes......"))
	require.NoError(t, err)
	acts := &activities.Activities{Store: store.New(db, "P7D"), Mailer: mailer, Templates: tpl, Feedback: links}

	run := func(in workflows.InviteInput) (*testsuite.TestWorkflowEnvironment, workflows.InviteResult, error) {
		var s testsuite.WorkflowTestSuite
		s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		env := s.NewTestWorkflowEnvironment()
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
	st, err := acts.Store.LoadInviteState(t.Context(), in.EventID)
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
	st, err = acts.Store.LoadInviteState(t.Context(), in.EventID)
	require.NoError(t, err)
	assert.Equal(t, invite.Failed, st.Status)

	in.Retry = true
	_, res, err = run(in)
	require.NoError(t, err)
	assert.Equal(t, invite.Skipped, res.Status)
	assert.Equal(t, invite.Suppressed, res.Reason)
	assert.Len(t, srv.Messages(), 1)

	require.NoError(t, acts.Store.DeleteSuppression(t.Context(), other.AccountID, "jane.doe@example.com"))
	in = workflows.InviteInput{EventID: other.Event(t, eventfixture.Event{}), AccountID: other.AccountID,
		EventTypeID: other.EventTypeID, ChannelID: other.ChannelID}
	_, res, err = run(in)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, res.Status, "once lifted, the address gets invites again")
	assert.Len(t, srv.Messages(), 2)
}
