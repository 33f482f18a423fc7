package starter

import (
	"context"
	"errors"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/store"
)

// A one-shot starter (webhook deliveries, template test sends) starts one
// workflow per row of an outbox table, whose ID the row names: a starter
// that dies after a start and before recording it leaves the row to the
// next one, whose start Temporal rejects as a duplicate of that ID. That
// counts as started, so no row gets two workflows and none is left
// without one.

// oneShot is what a one-shot starter has of its own: the name of its
// rows, their claim, a row's id and start attempts, and the start of a
// row's workflow (with startOnce).
type oneShot[T any] struct {
	what     string
	claim    func(ctx context.Context, limit int) (*store.StartBatch[T], error)
	id       func(T) string
	attempts func(T) int
	start    func(ctx context.Context, item T) error
}

// runOnce pumps the rows of a one-shot starter until ctx is cancelled,
// polling every sweep (default 1 s).
func runOnce[T any](ctx context.Context, logger **slog.Logger, tuning *Tuning, o oneShot[T]) error {
	if *logger == nil {
		*logger = slog.New(slog.DiscardHandler)
	}
	tuning.defaults(time.Second)
	claim := func(ctx context.Context, limit int) (claimed[T], error) {
		b, err := o.claim(ctx, limit)
		if err != nil {
			return claimed[T]{}, err
		}
		return o.claimed(b, tuning), nil
	}
	p := pump[T]{what: o.what, logger: *logger, tuning: tuning, claim: claim, start: o.start}
	return p.run(ctx, nil)
}

// claimed hands a claimed batch to the pump: started rows are marked,
// failed ones tried again after a back-off that grows with their
// attempts.
func (o oneShot[T]) claimed(b *store.StartBatch[T], tuning *Tuning) claimed[T] {
	finish := func(ctx context.Context, ok []T, failed []failedStart[T]) error {
		done := make([]string, len(ok))
		for i, it := range ok {
			done[i] = o.id(it)
		}
		retries := make([]store.StartRetry, len(failed))
		for i, f := range failed {
			retries[i] = store.StartRetry{ID: o.id(f.item), After: tuning.backoff(o.attempts(f.item)), Error: f.err.Error()}
		}
		return b.Finish(ctx, done, retries)
	}
	return claimed[T]{items: b.Starts, finish: finish, release: b.Release}
}

// startOnce starts a one-shot workflow; "already started" is success.
func startOnce(ctx context.Context, c client.Client, timeout time.Duration, opts client.StartWorkflowOptions,
	workflow string, input any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
	_, err := c.ExecuteWorkflow(ctx, opts, workflow, input)
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &already) {
		return nil
	}
	return err
}
