package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/workflows"
)

// TestReplayWebhookHistories replays the delivery workflow's recorded
// histories (`go test -tags record -run TestRecordWebhookHistories
// ./internal/webhookstack/`) with the current code: a change that is not
// behind workflow.GetVersion fails here.
func TestReplayWebhookHistories(t *testing.T) {
	t.Parallel()
	replayEach(t, "testdata/webhook/*.json", func(r worker.WorkflowReplayer) {
		r.RegisterWorkflowWithOptions(workflows.DeliverWebhookWith(workflows.WebhookOptions{}),
			workflow.RegisterOptions{Name: workflows.WebhookWorkflowType})
	}, func(t *testing.T, s string) {
		// Neither the body nor the secret of a delivery enters Temporal,
		// and no customer data: the recorded customers had addresses at
		// example.com.
		assert.NotContains(t, s, "example.com")
		assert.NotContains(t, s, "whsec_")
		assert.NotContains(t, s, `"timestamp"`, "no message body")
	})
}
