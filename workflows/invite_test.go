package workflows_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/internal/testworkflow"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sendtime"
	"github.com/touchpoint/touchpoint/workflows"
)

const eventID = "evt-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b"

var a *activities.Activities

func input() workflows.InviteInput {
	return workflows.InviteInput{EventID: eventID, AccountID: "acc-1", EventTypeID: "ety-1", ChannelID: "chl-1", CustomerReference: "C-42"}
}

// newEnv is a test environment whose sent invites have no reminder (the
// setting asks for none); reminder tests use newEnvWith and plan their own.
func newEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newEnvWith(t, workflows.Options{})
	env.OnActivity(a.LoadPlan, mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindReminder}).Return(invite.Plan{}, nil).Maybe()
	return env
}

func newEnvWith(t *testing.T, opts workflows.Options) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := testworkflow.New()
	env.RegisterWorkflowWithOptions(workflows.InviteWith(opts), workflow.RegisterOptions{Name: workflows.WorkflowType})
	env.RegisterActivity(&activities.Activities{})
	return env
}

// ofKind matches a step's input of the send of kind k.
func ofKind(k invite.Kind) any {
	return mock.MatchedBy(func(in any) bool {
		v := reflect.ValueOf(in)
		if v.Kind() != reflect.Struct {
			return false
		}
		f := v.FieldByName("Kind")
		return f.IsValid() && f.Interface() == k
	})
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func activePlan(p sendtime.Plan) invite.Plan {
	return invite.Plan{Status: invite.Pending, EventTypeActive: true, SettingActive: true, Plan: p}
}

// recorder mocks the database steps the way the store would answer them
// for a fresh invite and remembers what the workflow asked for.
type recorder struct {
	env          *testsuite.TestWorkflowEnvironment
	scheduledFor time.Time
	sendCalls    []time.Time // env clock at each send attempt
}

func (r *recorder) loadPlan(p invite.Plan) {
	r.env.OnActivity(a.LoadPlan, mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindInvite}).Return(p, nil).Once()
}

func (r *recorder) markScheduled() {
	r.env.OnActivity(a.MarkScheduled, mock.Anything, ofKind(invite.KindInvite)).Return(
		func(_ context.Context, in workflows.MarkScheduledInput) (invite.State, error) {
			r.scheduledFor = in.ScheduledFor
			return invite.State{Status: invite.Scheduled, ScheduledFor: &in.ScheduledFor}, nil
		}).Once()
}

// scheduled is a run of a fresh invite, with a recorder, whose send time
// is delay after the event, received now.
func scheduled(t *testing.T, delay string) (*testsuite.TestWorkflowEnvironment, *recorder) {
	t.Helper()
	env := newEnv(t)
	r := &recorder{env: env}
	r.loadPlan(activePlan(sendtime.Plan{ReceivedAt: env.Now(), Delay: delay}))
	r.markScheduled()
	return env, r
}

func (r *recorder) markCancelled() {
	r.env.OnActivity(a.MarkCancelled, mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindInvite}).
		Return(invite.State{Status: invite.Cancelled}, nil).Once()
}

// markFailed answers the one MarkFailed with the failure the send recorded.
func (r *recorder) markFailed(reason invite.Reason, lastError string) {
	r.env.OnActivity(a.MarkFailed, mock.Anything, mock.Anything).Return(invite.State{Status: invite.Failed,
		Reason: reason, LastError: lastError, Attempts: 1}, nil).Once()
}

// sendTakes makes the one send take d and succeed.
func (r *recorder) sendTakes(d time.Duration) {
	r.env.OnActivity(a.Send, mock.Anything, mock.Anything).After(d).Return(
		func(context.Context, workflows.EventInput) (invite.State, error) { return sent(r.env.Now()) }).Once()
}

// send makes each attempt answer with the next of results.
func (r *recorder) send(results ...func(now time.Time) (invite.State, error)) {
	for _, res := range results {
		r.env.OnActivity(a.Send, mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindInvite}).Return(
			func(context.Context, workflows.EventInput) (invite.State, error) {
				now := r.env.Now()
				r.sendCalls = append(r.sendCalls, now)
				return res(now)
			}).Once()
	}
}

func sent(now time.Time) (invite.State, error) {
	return invite.State{Status: invite.Sent, SentAt: &now, Attempts: 1, Medium: "email"}, nil
}

func final(status invite.Status, reason invite.Reason) func(time.Time) (invite.State, error) {
	return func(time.Time) (invite.State, error) {
		return invite.State{Status: status, Reason: reason, Attempts: 1}, nil
	}
}

func failWith(err error) func(time.Time) (invite.State, error) {
	return func(time.Time) (invite.State, error) { return invite.State{}, err }
}

func transient() error {
	return temporal.NewApplicationError("smtp: 451 4.3.0 try again later", workflows.ErrTypeTransient)
}

func result(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.InviteResult {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.InviteResult
	require.NoError(t, env.GetWorkflowResult(&res))
	env.AssertExpectations(t)
	return res
}

func TestSendTimes(t *testing.T) {
	t.Parallel()
	berlin := &sendtime.SendWindow{Start: "09:00", End: "17:00", TimeZone: "Europe/Berlin"}
	tests := []struct {
		name  string
		start string // the workflow's start: "now"
		plan  sendtime.Plan
		retry bool
		want  string
	}{
		{"delay from the event", "2026-05-01T10:00:00Z",
			sendtime.Plan{ReceivedAt: at("2026-05-01T10:00:00Z"), Delay: "P7D", DelayFrom: "event"}, false, "2026-05-08T10:00:00Z"},
		{"delay from the transaction", "2026-05-01T10:00:00Z",
			sendtime.Plan{ReceivedAt: at("2026-05-01T10:00:00Z"), TransactionDate: at("2026-04-30T06:00:00Z"), Delay: "P2D", DelayFrom: "transaction"}, false, "2026-05-02T06:00:00Z"},
		{"delay from the delivery date, in the window's zone", "2026-05-01T10:00:00Z",
			sendtime.Plan{ReceivedAt: at("2026-05-01T10:00:00Z"), DeliveryDate: "2026-05-05", Delay: "PT12H", DelayFrom: "delivery", SendWindow: berlin}, false, "2026-05-05T10:00:00Z"},
		{"delivery date absent: from the event", "2026-05-01T10:00:00Z",
			sendtime.Plan{ReceivedAt: at("2026-05-01T10:00:00Z"), Delay: "P1D", DelayFrom: "delivery"}, false, "2026-05-02T10:00:00Z"},
		{"window across the spring-forward (Berlin 2026-03-29)", "2026-03-28T18:00:00Z",
			sendtime.Plan{ReceivedAt: at("2026-03-28T18:00:00Z"), Delay: "PT1H", SendWindow: berlin}, false, "2026-03-29T07:00:00Z"},
		{"window across the fall-back (Berlin 2026-10-25)", "2026-10-24T16:00:00Z",
			sendtime.Plan{ReceivedAt: at("2026-10-24T16:00:00Z"), Delay: "PT0S", SendWindow: berlin}, false, "2026-10-25T08:00:00Z"},
		{"overnight window", "2026-05-01T10:00:00Z",
			sendtime.Plan{ReceivedAt: at("2026-05-01T10:00:00Z"), Delay: "PT1H",
				SendWindow: &sendtime.SendWindow{Start: "22:00", End: "06:00", TimeZone: "Europe/Berlin"}}, false, "2026-05-01T20:00:00Z"},
		{"start in the past: now", "2026-05-01T10:00:00Z",
			sendtime.Plan{ReceivedAt: at("2026-01-01T10:00:00Z"), Delay: "P7D"}, false, "2026-05-01T10:00:00Z"},
		{"a retry sends now, skipping delay and window", "2026-05-01T18:00:00Z",
			sendtime.Plan{ReceivedAt: at("2026-05-01T10:00:00Z"), Delay: "P7D", SendWindow: berlin}, true, "2026-05-01T18:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t)
			env.SetStartTime(at(tc.start))
			r := &recorder{env: env}
			r.loadPlan(activePlan(tc.plan))
			r.markScheduled()
			r.send(sent)
			in := input()
			in.Retry = tc.retry
			env.ExecuteWorkflow(workflows.WorkflowType, in)

			res := result(t, env)
			assert.Equal(t, invite.Sent, res.Status)
			assert.True(t, at(tc.want).Equal(r.scheduledFor), "scheduled for %s", r.scheduledFor)
			require.Len(t, r.sendCalls, 1)
			assert.True(t, at(tc.want).Equal(r.sendCalls[0]), "sent at %s: the timer waits until the send time", r.sendCalls[0])
			assert.True(t, r.sendCalls[0].Equal(res.SentAt))
		})
	}
}

func TestInactiveAtAcceptance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		plan   invite.Plan
		reason invite.Reason
	}{
		{"event type inactive", invite.Plan{Status: invite.Pending, EventTypeActive: false, SettingActive: true}, invite.EventTypeInactive},
		{"setting inactive", invite.Plan{Status: invite.Pending, EventTypeActive: true, SettingActive: false}, invite.SettingInactive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t)
			r := &recorder{env: env}
			r.loadPlan(tc.plan)
			env.OnActivity(a.MarkSkipped, mock.Anything, workflows.MarkSkippedInput{EventID: eventID, Kind: invite.KindInvite, Reason: tc.reason}).
				Return(invite.State{Status: invite.Skipped, Reason: tc.reason}, nil).Once()
			env.ExecuteWorkflow(workflows.WorkflowType, input())

			res := result(t, env)
			assert.Equal(t, workflows.InviteResult{Status: invite.Skipped, Reason: tc.reason}, res)
			env.AssertActivityNotCalled(t, "MarkScheduled", mock.Anything, mock.Anything)
			env.AssertActivityNotCalled(t, "Send", mock.Anything, mock.Anything)
		})
	}
}

func TestDecidedAtSendTime(t *testing.T) {
	t.Parallel()
	// The send activity re-reads the setting and the throttle: whatever it
	// finds ends the run.
	for _, tc := range []struct {
		status invite.Status
		reason invite.Reason
	}{
		{invite.Skipped, invite.SettingInactive},
		{invite.Skipped, invite.EventTypeInactive},
		{invite.Skipped, invite.RecentlyInvited},
		{invite.Skipped, invite.NoAddress},
		{invite.Cancelled, ""}, // the API cancelled; the signal is still on its way
		{invite.Sent, ""},      // a repeated attempt finds the invite sent
	} {
		t.Run(string(tc.status)+" "+string(tc.reason), func(t *testing.T) {
			t.Parallel()
			env, r := scheduled(t, "P1D")
			r.send(final(tc.status, tc.reason))
			env.ExecuteWorkflow(workflows.WorkflowType, input())

			res := result(t, env)
			assert.Equal(t, tc.status, res.Status)
			assert.Equal(t, tc.reason, res.Reason)
			assert.Len(t, r.sendCalls, 1)
		})
	}
}

func TestCancelledBeforeTheRunBegan(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	r := &recorder{env: env}
	r.loadPlan(activePlan(sendtime.Plan{ReceivedAt: env.Now(), Delay: "P1D"}))
	env.OnActivity(a.MarkScheduled, mock.Anything, mock.Anything).Return(invite.State{Status: invite.Cancelled}, nil).Once()
	env.ExecuteWorkflow(workflows.WorkflowType, input())

	res := result(t, env)
	assert.Equal(t, invite.Cancelled, res.Status)
	env.AssertActivityNotCalled(t, "Send", mock.Anything, mock.Anything)
}

func TestCancelSignalBeforeTheSend(t *testing.T) {
	t.Parallel()
	for name, payload := range map[string]any{"from the API": workflows.CancelRequest{Source: "api"}, "from the UI, without input": nil} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t)
			start := at("2026-05-01T10:00:00Z")
			env.SetStartTime(start)
			r := &recorder{env: env}
			r.loadPlan(activePlan(sendtime.Plan{ReceivedAt: start, Delay: "P7D"}))
			r.markScheduled()
			r.markCancelled()

			var during workflows.InviteResult
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(workflows.StatusQuery)
				require.NoError(t, err)
				require.NoError(t, v.Get(&during))
				env.SignalWorkflow(workflows.CancelSignal, payload)
			}, 24*time.Hour)
			env.ExecuteWorkflow(workflows.WorkflowType, input())

			res := result(t, env)
			assert.Equal(t, invite.Cancelled, res.Status)
			assert.Equal(t, invite.Scheduled, during.Status, "the status query while waiting")
			assert.True(t, start.Add(7*24*time.Hour).Equal(during.ScheduledFor))
			assert.True(t, start.Add(24*time.Hour).Equal(env.Now()), "the run ends at the cancel, not at the send time")
			env.AssertActivityNotCalled(t, "Send", mock.Anything, mock.Anything)
		})
	}
}

func TestTemporalCancelBeforeTheSend(t *testing.T) {
	t.Parallel()
	env, r := scheduled(t, "P7D")
	r.markCancelled()
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour)
	env.ExecuteWorkflow(workflows.WorkflowType, input())

	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	var canceled *temporal.CanceledError
	assert.ErrorAs(t, err, &canceled, "a cancel request ends the run Cancelled")
	env.AssertExpectations(t)
	env.AssertActivityNotCalled(t, "Send", mock.Anything, mock.Anything)
}

func TestCancelAfterTheSendBeganHasNoEffect(t *testing.T) {
	t.Parallel()
	env, r := scheduled(t, "PT1H")
	r.sendTakes(time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.CancelSignal, workflows.CancelRequest{Source: "api"}) }, time.Hour+30*time.Second)
	env.ExecuteWorkflow(workflows.WorkflowType, input())

	res := result(t, env)
	assert.Equal(t, invite.Sent, res.Status)
	env.AssertActivityNotCalled(t, "MarkCancelled", mock.Anything, mock.Anything)
}

func TestTemporalCancelWhileSendingLetsTheSendFinish(t *testing.T) {
	t.Parallel()
	env, r := scheduled(t, "PT1H")
	r.sendTakes(time.Minute)
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Hour+30*time.Second)
	env.ExecuteWorkflow(workflows.WorkflowType, input())

	res := result(t, env)
	assert.Equal(t, invite.Sent, res.Status, "the invite went out and is recorded so")
	env.AssertActivityNotCalled(t, "MarkCancelled", mock.Anything, mock.Anything)
}

// TestFinalFailures: a failure the send calls final is recorded and never
// tried again.
func TestFinalFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		err       error
		reason    invite.Reason
		lastError string
	}{
		{"rejected", temporal.NewNonRetryableApplicationError("invite failed: rejected: smtp: 550 5.1.1 j***@example.com: mailbox unavailable",
			workflows.ErrTypeRejected, nil), invite.Rejected, "smtp: 550 5.1.1 j***@example.com: mailbox unavailable"},
		{"delivery uncertain", temporal.NewNonRetryableApplicationError("invite failed: delivery_uncertain", workflows.ErrTypeUncertain, nil),
			invite.DeliveryUncertain, "a send attempt was interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, r := scheduled(t, "PT0S")
			r.send(failWith(tc.err))
			// The activity recorded the failure; MarkFailed reads it back.
			r.markFailed(tc.reason, tc.lastError)
			env.ExecuteWorkflow(workflows.WorkflowType, input())

			requireFailed(t, env, tc.reason)
			assert.Len(t, r.sendCalls, 1, "a final failure is not retried")
		})
	}
}

func TestTransientFailureThenSuccess(t *testing.T) {
	t.Parallel()
	env, r := scheduled(t, "PT0S")
	r.send(failWith(transient()), failWith(transient()), func(now time.Time) (invite.State, error) {
		return invite.State{Status: invite.Sent, SentAt: &now, Attempts: 3, LastError: "smtp: 451 4.3.0 try again later"}, nil
	})
	env.ExecuteWorkflow(workflows.WorkflowType, input())

	res := result(t, env)
	assert.Equal(t, invite.Sent, res.Status)
	assert.Equal(t, 3, res.Attempts)
	require.Len(t, r.sendCalls, 3)
	assert.Equal(t, 10*time.Second, r.sendCalls[1].Sub(r.sendCalls[0]), "back-off starts at 10 s")
	assert.Equal(t, 20*time.Second, r.sendCalls[2].Sub(r.sendCalls[1]), "and doubles")
}

func TestRetriesExhausted(t *testing.T) {
	t.Parallel()
	// The test environment caps unlimited attempts at 10; lift the cap so
	// that the 24 h give-up time is what ends the send, as in production.
	env := newEnvWith(t, workflows.Options{SendMaxAttempts: 1000})
	env.OnActivity(a.LoadPlan, mock.Anything, workflows.EventInput{EventID: eventID, Kind: invite.KindReminder}).Return(invite.Plan{}, nil).Maybe()
	start := env.Now()
	r := &recorder{env: env}
	r.loadPlan(activePlan(sendtime.Plan{ReceivedAt: start, Delay: "PT0S"}))
	r.markScheduled()
	env.OnActivity(a.Send, mock.Anything, mock.Anything).Return(
		func(context.Context, workflows.EventInput) (invite.State, error) {
			r.sendCalls = append(r.sendCalls, env.Now())
			return invite.State{}, transient()
		})
	env.OnActivity(a.MarkFailed, mock.Anything, workflows.MarkFailedInput{EventID: eventID, Kind: invite.KindInvite,
		Reason: invite.RetriesExhausted, LastError: "smtp: 451 4.3.0 try again later"}).
		Return(invite.State{Status: invite.Failed, Reason: invite.RetriesExhausted, LastError: "smtp: 451 4.3.0 try again later"}, nil).Once()
	env.ExecuteWorkflow(workflows.WorkflowType, input())

	requireFailed(t, env, invite.RetriesExhausted)
	require.Greater(t, len(r.sendCalls), 20)
	last := r.sendCalls[len(r.sendCalls)-1]
	assert.Less(t, last.Sub(start), 24*time.Hour, "it gives up after 24 h")
	assert.Greater(t, last.Sub(start), 22*time.Hour)
	assert.Equal(t, time.Hour, last.Sub(r.sendCalls[len(r.sendCalls)-2]), "the back-off is capped at 1 h")
}

func TestSentButNotRecorded(t *testing.T) {
	t.Parallel()
	env, r := scheduled(t, "PT0S")
	sentAt := at("2026-05-01T10:00:00Z")
	r.send(failWith(temporal.NewNonRetryableApplicationError("invite sent but not recorded", workflows.ErrTypeSentUnrecorded, nil,
		workflows.SentUnrecorded{SentAt: sentAt})))
	env.OnActivity(a.RecordSent, mock.Anything, workflows.RecordSentInput{EventID: eventID, Kind: invite.KindInvite, SentAt: sentAt}).
		Return(invite.State{Status: invite.Sent, SentAt: &sentAt, Attempts: 1}, nil).Once()
	env.ExecuteWorkflow(workflows.WorkflowType, input())

	res := result(t, env)
	assert.Equal(t, invite.Sent, res.Status)
	assert.Equal(t, sentAt, res.SentAt)
	assert.Len(t, r.sendCalls, 1)
	env.AssertActivityNotCalled(t, "MarkFailed", mock.Anything, mock.Anything)
}

func TestEventNotFound(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.OnActivity(a.LoadPlan, mock.Anything, mock.Anything).
		Return(invite.Plan{}, temporal.NewNonRetryableApplicationError("event not found", workflows.ErrTypeNotFound, nil)).Once()
	env.ExecuteWorkflow(workflows.WorkflowType, input())

	require.True(t, env.IsWorkflowCompleted())
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, env.GetWorkflowError(), &appErr)
	assert.Equal(t, workflows.ErrTypeNotFound, appErr.Type())
	env.AssertExpectations(t)
}

func TestDatabaseStepsAreRetried(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	r := &recorder{env: env}
	env.OnActivity(a.LoadPlan, mock.Anything, mock.Anything).Return(invite.Plan{}, errors.New("database unavailable")).Twice()
	r.loadPlan(activePlan(sendtime.Plan{ReceivedAt: env.Now(), Delay: "PT0S"}))
	r.markScheduled()
	r.send(sent)
	env.ExecuteWorkflow(workflows.WorkflowType, input())

	assert.Equal(t, invite.Sent, result(t, env).Status)
}

// requireFailed checks a run that ends with a failed invite: Failed in the
// Temporal UI, with the reason in the error.
func requireFailed(t *testing.T, env *testsuite.TestWorkflowEnvironment, reason invite.Reason) {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, workflows.ErrTypeInviteFailed, appErr.Type())
	assert.Contains(t, appErr.Message(), reason)
	env.AssertExpectations(t)
	v, qerr := env.QueryWorkflow(workflows.StatusQuery)
	require.NoError(t, qerr)
	var st workflows.InviteResult
	require.NoError(t, v.Get(&st))
	assert.Equal(t, invite.Failed, st.Status)
	assert.Equal(t, reason, st.Reason)
}

func TestContract(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "evt-1", workflows.WorkflowID("evt-1"))
	assert.Equal(t, map[string]enumspb.IndexedValueType{
		"TouchpointAccountId":         enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"TouchpointEventTypeId":       enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"TouchpointChannelId":         enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"TouchpointInviteStatus":      enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"TouchpointCustomerReference": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	}, workflows.SearchAttributes())

	sa := workflows.StartSearchAttributes(input())
	for key, want := range map[temporal.SearchAttributeKeyKeyword]string{
		workflows.AccountIDKey: "acc-1", workflows.EventTypeIDKey: "ety-1", workflows.ChannelIDKey: "chl-1",
		workflows.InviteStatusKey: "pending", workflows.CustomerReferenceKey: "C-42",
	} {
		got, ok := sa.GetKeyword(key)
		assert.True(t, ok, key.GetName())
		assert.Equal(t, want, got, key.GetName())
	}
	noRef := input()
	noRef.CustomerReference = ""
	assert.False(t, workflows.StartSearchAttributes(noRef).ContainsKey(workflows.CustomerReferenceKey))
}

// The search attributes are set at start; a run changes only the status,
// once, when the invite ends (each upsert is a billed Temporal Action).
func TestSearchAttributesChangeWhenTheInviteEnds(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	require.NoError(t, env.SetTypedSearchAttributesOnStart(workflows.StartSearchAttributes(input())))
	var statuses []string
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		assert.Equal(t, 1, sa.Size(), "only the status changes")
		s, _ := sa.GetKeyword(workflows.InviteStatusKey)
		statuses = append(statuses, s)
	}).Return(nil)
	r := &recorder{env: env}
	r.loadPlan(activePlan(sendtime.Plan{ReceivedAt: env.Now(), Delay: "PT1H"}))
	r.markScheduled()
	r.send(sent)
	env.ExecuteWorkflow(workflows.WorkflowType, input())

	assert.Equal(t, invite.Sent, result(t, env).Status)
	assert.Equal(t, []string{"sent"}, statuses)
}

func TestSearchAttributesAddedWhenStartedWithout(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	var first temporal.SearchAttributes
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		if first.Size() == 0 {
			first = args.Get(0).(temporal.SearchAttributes)
		}
	}).Return(nil)
	r := &recorder{env: env}
	r.loadPlan(activePlan(sendtime.Plan{ReceivedAt: env.Now(), Delay: "PT0S"}))
	r.markScheduled()
	r.send(sent)
	env.ExecuteWorkflow(workflows.WorkflowType, input())

	assert.Equal(t, invite.Sent, result(t, env).Status)
	for key, want := range map[temporal.SearchAttributeKeyKeyword]string{
		workflows.AccountIDKey: "acc-1", workflows.EventTypeIDKey: "ety-1", workflows.ChannelIDKey: "chl-1",
		workflows.CustomerReferenceKey: "C-42", workflows.InviteStatusKey: "pending",
	} {
		got, _ := first.GetKeyword(key)
		assert.Equal(t, want, got, key.GetName())
	}
}
