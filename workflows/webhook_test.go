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
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/internal/testworkflow"
	"github.com/touchpoint/touchpoint/workflows"
)

var wh *activities.Webhooks

const deliveryID = "msg-6f1d2c3b-4a5e-4f60-8b71-9c8d7e6f5a4b"

func webhookInput() workflows.WebhookInput {
	return workflows.WebhookInput{DeliveryID: deliveryID, EndpointID: "whk-1", AccountID: "acc-1", Type: "invite.sent"}
}

func newWebhookEnv(t *testing.T, opts workflows.WebhookOptions) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := testworkflow.New()
	env.RegisterWorkflowWithOptions(workflows.DeliverWebhookWith(opts), workflow.RegisterOptions{Name: workflows.WebhookWorkflowType})
	env.RegisterActivity(&activities.Webhooks{})
	return env
}

// attempts mocks DeliverWebhook with answers, one per attempt (the last
// repeats), and notes the test clock at each.
func attempts(env *testsuite.TestWorkflowEnvironment, calls *[]time.Time, answers ...func(n int) (workflows.WebhookResult, error)) {
	env.OnActivity(wh.DeliverWebhook, mock.Anything, webhookInput()).Return(
		func(context.Context, workflows.WebhookInput) (workflows.WebhookResult, error) {
			*calls = append(*calls, env.Now())
			n := len(*calls)
			return answers[min(n, len(answers))-1](n)
		})
}

func failedAttempt(int) (workflows.WebhookResult, error) {
	return workflows.WebhookResult{}, temporal.NewApplicationError("503 Service Unavailable", workflows.ErrTypeWebhookAttempt)
}

func TestWebhookRetriedUntilDelivered(t *testing.T) {
	t.Parallel()
	env := newWebhookEnv(t, workflows.WebhookOptions{})
	var calls []time.Time
	attempts(env, &calls, failedAttempt, failedAttempt, func(n int) (workflows.WebhookResult, error) {
		return workflows.WebhookResult{Status: workflows.WebhookSucceeded, Attempts: n, LastStatusCode: 200}, nil
	})
	env.ExecuteWorkflow(workflows.WebhookWorkflowType, webhookInput())

	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.WebhookResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Equal(t, workflows.WebhookResult{Status: workflows.WebhookSucceeded, Attempts: 3, LastStatusCode: 200}, res)
	env.AssertExpectations(t)
	require.Len(t, calls, 3)
	assert.Equal(t, 10*time.Second, calls[1].Sub(calls[0]), "the first retry within 30 s")
	assert.Equal(t, 20*time.Second, calls[2].Sub(calls[1]), "then doubling")
}

func TestWebhookGivenUpAfterThreeDays(t *testing.T) {
	t.Parallel()
	// The test environment caps unlimited attempts at 10; lift the cap so
	// that the 3 days are what end the retries, as in production.
	env := newWebhookEnv(t, workflows.WebhookOptions{MaxAttempts: 10000})
	start := env.Now()
	var calls []time.Time
	attempts(env, &calls, failedAttempt)
	env.OnActivity(wh.GiveUpWebhook, mock.Anything, workflows.GiveUpWebhookInput{DeliveryID: deliveryID,
		Reason: "not delivered after retrying for 3 days"}).
		Return(workflows.WebhookResult{Status: workflows.WebhookFailed, Attempts: 80, LastStatusCode: 503, LastError: "503 Service Unavailable"}, nil).Once()
	env.ExecuteWorkflow(workflows.WebhookWorkflowType, webhookInput())

	require.True(t, env.IsWorkflowCompleted())
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, env.GetWorkflowError(), &appErr, "a delivery given up fails its run")
	assert.Equal(t, workflows.ErrTypeWebhookFailed, appErr.Type())
	assert.Contains(t, appErr.Message(), "503 Service Unavailable")
	env.AssertExpectations(t)

	require.Greater(t, len(calls), 50)
	last := calls[len(calls)-1]
	assert.Less(t, last.Sub(start), 72*time.Hour, "no attempt after 3 days")
	assert.Greater(t, last.Sub(start), 70*time.Hour, "attempts go on for nearly 3 days")
	for i := 1; i < len(calls); i++ {
		assert.LessOrEqual(t, calls[i].Sub(calls[i-1]), time.Hour, "at most 1 h between tries")
	}
	assert.Equal(t, time.Hour, last.Sub(calls[len(calls)-2]))
}

func TestWebhookDecidedWithoutRetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		answer  workflows.WebhookResult
		failure bool
	}{
		{"410 Gone", workflows.WebhookResult{Status: workflows.WebhookFailed, Attempts: 1, LastStatusCode: 410, LastError: "410 Gone"}, true},
		{"endpoint disabled", workflows.WebhookResult{Status: workflows.WebhookFailed, LastError: "endpoint disabled"}, true},
		{"endpoint deleted", workflows.WebhookResult{Status: workflows.WebhookDeleted}, false},
		{"delivered by an earlier run", workflows.WebhookResult{Status: workflows.WebhookSucceeded, Attempts: 1, LastStatusCode: 204}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newWebhookEnv(t, workflows.WebhookOptions{})
			var calls []time.Time
			attempts(env, &calls, func(int) (workflows.WebhookResult, error) { return tt.answer, nil })
			env.ExecuteWorkflow(workflows.WebhookWorkflowType, webhookInput())

			require.True(t, env.IsWorkflowCompleted())
			assert.Len(t, calls, 1)
			env.AssertExpectations(t) // GiveUpWebhook is not mocked: it must not run
			if tt.failure {
				var appErr *temporal.ApplicationError
				require.ErrorAs(t, env.GetWorkflowError(), &appErr)
				assert.Equal(t, workflows.ErrTypeWebhookFailed, appErr.Type())
				assert.Contains(t, appErr.Message(), tt.answer.LastError)
				return
			}
			require.NoError(t, env.GetWorkflowError())
			var res workflows.WebhookResult
			require.NoError(t, env.GetWorkflowResult(&res))
			assert.Equal(t, tt.answer, res)
		})
	}
}

// TestWebhookCancelledGivesUp: a run cancelled from the Temporal UI
// stops retrying and gives its delivery up.
func TestWebhookCancelledGivesUp(t *testing.T) {
	t.Parallel()
	env := newWebhookEnv(t, workflows.WebhookOptions{})
	var calls []time.Time
	attempts(env, &calls, failedAttempt)
	env.OnActivity(wh.GiveUpWebhook, mock.Anything, workflows.GiveUpWebhookInput{DeliveryID: deliveryID,
		Reason: "delivery cancelled in Temporal"}).
		Return(workflows.WebhookResult{Status: workflows.WebhookFailed, Attempts: 2, LastError: "503 Service Unavailable"}, nil).Once()
	env.RegisterDelayedCallback(env.CancelWorkflow, 15*time.Second)
	env.ExecuteWorkflow(workflows.WebhookWorkflowType, webhookInput())

	require.True(t, env.IsWorkflowCompleted())
	require.Error(t, env.GetWorkflowError())
	env.AssertExpectations(t)
	assert.Len(t, calls, 2, "no attempt after the cancel")
}
