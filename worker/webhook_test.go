package worker_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/worker"
	"github.com/touchpoint/touchpoint/workflows"
)

// TestRegisterWebhooksCoversTheContract: the delivery workflow calls its
// activities by name; each must be registered on the webhook worker.
func TestRegisterWebhooksCoversTheContract(t *testing.T) {
	t.Parallel()
	var r recorder
	worker.RegisterWebhooks(&r, &activities.Webhooks{}, workflows.WebhookOptions{})
	assert.Equal(t, []string{workflows.WebhookWorkflowType}, r.workflows)
	assert.ElementsMatch(t, []string{workflows.DeliverWebhookActivity, workflows.GiveUpWebhookActivity}, r.activities,
		"exactly the contract's activities: nothing else lands on the webhooks task queue")
}
