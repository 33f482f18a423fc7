package worker

import (
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/workflows"
)

// WebhookOptions configure the webhook worker; the zero value is the
// default.
type WebhookOptions struct {
	// Workflow holds the delivery retries (defaults: from 10 s, doubling
	// to at most 1 h, for up to 3 days).
	Workflow workflows.WebhookOptions
	// Worker holds the SDK's worker options. WorkerStopTimeout defaults to
	// DefaultStopTimeout.
	Worker sdkworker.Options
	// BuildID makes it a versioned worker, as Options.BuildID does.
	BuildID string
}

// NewWebhooks builds the worker of workflows.WebhookTaskQueue: webhook
// deliveries run on a task queue of their own, so invites never wait
// behind them, and each can be given its own pollers and limits. Start it
// with Run beside the invite worker.
func NewWebhooks(c client.Client, acts *activities.Webhooks, opts WebhookOptions) sdkworker.Worker {
	w := sdkworker.New(c, workflows.WebhookTaskQueue, versioned(opts.Worker, opts.BuildID))
	RegisterWebhooks(w, acts, opts.Workflow)
	return w
}

// RegisterWebhooks registers the delivery workflow under
// workflows.WebhookWorkflowType and every method of acts as an activity.
func RegisterWebhooks(r Registry, acts *activities.Webhooks, opts workflows.WebhookOptions) {
	registerWorkflow(r, workflows.DeliverWebhookWith(opts), workflows.WebhookWorkflowType)
	r.RegisterActivity(acts)
}
