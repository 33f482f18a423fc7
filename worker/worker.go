// Package worker builds the Temporal worker of the invites task queue:
// the invite workflow and its activities. `touchpoint worker` and
// `touchpoint dev` start it.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/workflows"
)

// Options configure the invite worker; the zero value is the default.
type Options struct {
	// Workflow holds the workflow's timeouts and send retries (defaults:
	// back-off from 10 s to 1 h, giving up after 24 h).
	Workflow workflows.Options
	// Worker holds the SDK's worker options (concurrency, rate limits,
	// interceptors, ...). WorkerStopTimeout defaults to DefaultStopTimeout.
	Worker sdkworker.Options
	// ReconcileGrace is the reconciler's grace period (0: its default,
	// activities.DefaultReconcileGrace); keep it above the send timeout.
	ReconcileGrace time.Duration
}

// DefaultStopTimeout is how long Stop lets running activities finish: a
// send cut off mid-SMTP would end delivery_uncertain instead of sent.
const DefaultStopTimeout = time.Minute

// New builds the worker on workflows.TaskQueue. The caller starts it
// (Start, or Run with an interrupt channel) and stops it on shutdown.
func New(c client.Client, acts *activities.Activities, opts Options) sdkworker.Worker {
	if opts.Worker.WorkerStopTimeout == 0 {
		opts.Worker.WorkerStopTimeout = DefaultStopTimeout
	}
	w := sdkworker.New(c, workflows.TaskQueue, opts.Worker)
	Register(w, acts, opts.Workflow)
	RegisterReconciler(w, &activities.Reconciler{Store: acts.Store, Temporal: c, Grace: opts.ReconcileGrace, Logger: acts.Logger})
	return w
}

// RegisterReconciler registers the reconciler workflow under
// workflows.ReconcileWorkflowType and its step. Every worker of the
// invites task queue registers it, as the Schedule may hand a run to any.
func RegisterReconciler(r Registry, rec *activities.Reconciler) {
	r.RegisterWorkflowWithOptions(workflows.Reconcile, workflow.RegisterOptions{Name: workflows.ReconcileWorkflowType})
	r.RegisterActivity(rec)
}

// Registry is what Register registers on: a worker, a test environment.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
	RegisterActivity(a any)
}

// Register registers the invite workflow under workflows.WorkflowType and
// every method of acts as an activity; the workflow runs the database steps
// among them as local activities, which find acts by the same registration.
func Register(r Registry, acts *activities.Activities, opts workflows.Options) {
	r.RegisterWorkflowWithOptions(workflows.InviteWith(opts), workflow.RegisterOptions{Name: workflows.WorkflowType})
	r.RegisterActivity(acts)
}

// Run starts w once Temporal answers and stops it when ctx ends. Temporal
// may still be starting (a fresh cluster): Run waits for it rather than
// fail, since a worker's Start cannot be retried. Stop lets running
// activities finish, up to the worker's stop timeout.
func Run(ctx context.Context, c client.Client, w sdkworker.Worker, logger *slog.Logger) error {
	for {
		_, err := c.CheckHealth(ctx, &client.CheckHealthRequest{})
		if err == nil {
			break
		}
		logger.Warn("worker cannot reach Temporal yet; retrying", "error", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(3 * time.Second):
		}
	}
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	logger.Info("worker started") // the caller's logger names the task queue
	<-ctx.Done()
	w.Stop()
	logger.Info("stopped", "server", "worker")
	return nil
}
