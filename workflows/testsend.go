package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The test send workflow: one run per test of a template that a shop
// sends itself (POST /templates/test-send), started by the test send
// starter from the row the API wrote. It makes one activity call, which
// renders the template in force with sample data, sends it — marked as a
// test — and records the outcome. A delivery that fails is recorded as
// failed, not retried: the shop sees why and may send another test. Only
// a step that could not reach PostgreSQL is retried.

// TestSendWorkflowType is the registered name of the test send workflow.
const TestSendWorkflowType = "TemplateTestSend"

// TestSendWorkflowID is the ID of a test send's workflow: the test send's
// ID (tts-…), so a second start for one test is rejected.
func TestSendWorkflowID(testSendID string) string { return testSendID }

// SendTemplateTestActivity sends the test and records how it ended.
const SendTemplateTestActivity = "SendTemplateTest"

// TestSendInput starts a test send workflow. The address is read from
// PostgreSQL by the activity.
type TestSendInput struct {
	TestSendID string
	AccountID  string
}

// TestSendResult is how a test send ended: sent or failed, and why.
type TestSendResult struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// TestSend is the test send workflow.
func TestSend(ctx workflow.Context, in TestSendInput) (TestSendResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: time.Hour,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{ErrTypeNotFound}},
		Summary: "send the test",
	})
	var res TestSendResult
	err := workflow.ExecuteActivity(ctx, SendTemplateTestActivity, in).Get(ctx, &res)
	return res, err
}
