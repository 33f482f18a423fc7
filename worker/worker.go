// Package worker builds the Temporal worker of the invites task queue:
// the invite workflow and its activities. `touchpoint worker` and
// `touchpoint dev` start it.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
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
	// Stuck and Outbox are what the reconciler repairs (store/invitedb)
	// and the outbox it wakes when a repair orders a new run
	// (store/eventdb).
	Stuck  activities.StuckSends
	Outbox interface{ Notify(context.Context) error }
	// Polling, when set, learns of a fatal error that stops the worker
	// (the SDK's OnFatalError); run the worker with its Run.
	Polling *Polling
	// BuildID, when set, makes the worker a versioned one: it joins the
	// Worker Deployment workflows.DeploymentName as the Version of this
	// build, and gets the work Temporal routes to that Version (see
	// workflows.VersioningBehavior). Empty: an unversioned worker.
	BuildID string
}

// DefaultStopTimeout is how long Stop lets running activities finish: a
// send cut off mid-SMTP would end delivery_uncertain instead of sent.
const DefaultStopTimeout = time.Minute

// New builds the worker on workflows.TaskQueue. The caller starts it
// (Start, or Run with an interrupt channel) and stops it on shutdown.
func New(c client.Client, acts *activities.Activities, opts Options) sdkworker.Worker {
	w := sdkworker.New(c, workflows.TaskQueue, opts.sdkOptions())
	Register(w, acts, opts.Workflow)
	RegisterReconciler(w, &activities.Reconciler{Store: opts.Stuck, Outbox: opts.Outbox, Temporal: c, Grace: opts.ReconcileGrace, Logger: acts.Logger})
	return w
}

// RegisterReconciler registers the reconciler workflow under
// workflows.ReconcileWorkflowType and its step. Every worker of the
// invites task queue registers it, as the Schedule may hand a run to any.
func RegisterReconciler(r Registry, rec *activities.Reconciler) {
	registerWorkflow(r, workflows.Reconcile, workflows.ReconcileWorkflowType)
	r.RegisterActivity(rec)
}

// versioned sets the defaults every worker of Touchpoint shares: the stop
// timeout, and with a build ID the Worker Deployment Version.
func versioned(o sdkworker.Options, buildID string) sdkworker.Options {
	if o.WorkerStopTimeout == 0 {
		o.WorkerStopTimeout = DefaultStopTimeout
	}
	if buildID != "" {
		o.DeploymentOptions = sdkworker.DeploymentOptions{UseVersioning: true,
			Version: sdkworker.WorkerDeploymentVersion{DeploymentName: workflows.DeploymentName, BuildID: buildID}}
	}
	return o
}

// registerWorkflow registers fn under the workflow type name, with the
// type's versioning behaviour.
func registerWorkflow(r Registry, fn any, name string) {
	r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name, VersioningBehavior: workflows.VersioningBehavior(name)})
}

// sdkOptions are the SDK's worker options with the defaults and the hook
// of Polling.
func (opts Options) sdkOptions() sdkworker.Options {
	o := versioned(opts.Worker, opts.BuildID)
	if p := opts.Polling; p != nil {
		next := o.OnFatalError
		o.OnFatalError = func(err error) {
			p.stoppedBy(err)
			if next != nil {
				next(err)
			}
		}
	}
	return o
}

// Registry is what Register registers on: a worker, a test environment.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
	RegisterActivity(a any)
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// Register registers the invite workflow under workflows.WorkflowType, the
// test send workflow under workflows.TestSendWorkflowType, every method
// of acts as an activity, and the step names of runs begun before the one
// send pipeline (legacySteps); the workflow runs the database steps among
// them as local activities, which find acts by the same registration.
func Register(r Registry, acts *activities.Activities, opts workflows.Options) {
	registerWorkflow(r, workflows.InviteWith(opts), workflows.WorkflowType)
	registerWorkflow(r, workflows.TestSend, workflows.TestSendWorkflowType)
	r.RegisterActivity(acts)
	registerLegacySteps(r, acts)
}

// Polling tells whether a worker run by its Run is polling its task
// queue: Start returned nil, and neither a fatal error (see
// Options.Polling) nor Stop has ended it since. The SDK keeps its pollers'
// own state to itself; this is what the process can know of them. The
// zero value is ready to use; its methods are safe for concurrent use.
type Polling struct {
	running atomic.Bool
	fatal   chan error // the first fatal error, once
	once    sync.Once
}

// Running reports whether the worker is polling.
func (p *Polling) Running() bool { return p.running.Load() }

func (p *Polling) init() { p.once.Do(func() { p.fatal = make(chan error, 1) }) }

// stoppedBy records the fatal error that stopped the worker.
func (p *Polling) stoppedBy(err error) {
	p.init()
	p.running.Store(false)
	select {
	case p.fatal <- err:
	default: // the SDK reports only the first; keep that one
	}
}

// Run starts w once Temporal answers and stops it when ctx ends. Temporal
// may still be starting (a fresh cluster): Run waits for it rather than
// fail, since a worker's Start cannot be retried. Stop lets running
// activities finish, up to the worker's stop timeout.
func Run(ctx context.Context, c client.Client, w sdkworker.Worker, logger *slog.Logger) error {
	return new(Polling).Run(ctx, c, w, logger)
}

// Run is the package's Run, keeping p up to date. A fatal error that
// stops the worker (when w was built with Options.Polling p) ends it with
// that error, so the process exits and its supervisor restarts it, rather
// than living on without pollers.
func (p *Polling) Run(ctx context.Context, c client.Client, w sdkworker.Worker, logger *slog.Logger) error {
	p.init()
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
	p.running.Store(true)
	logger.Info("worker started") // the caller's logger names the task queue
	select {
	case <-ctx.Done():
	case err := <-p.fatal:
		p.running.Store(false)
		w.Stop() // the SDK stops it too; Stop is safe to repeat
		return fmt.Errorf("worker stopped: %w", err)
	}
	p.running.Store(false)
	w.Stop()
	logger.Info("stopped", "server", "worker")
	return nil
}
