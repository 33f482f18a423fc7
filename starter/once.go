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

// runOnce pumps the rows of a one-shot starter until ctx is cancelled,
// polling every sweep (default 1 s).
func runOnce[T any](ctx context.Context, what string, logger **slog.Logger, tuning *Tuning,
	claim func(ctx context.Context, limit int) (claimed[T], error), start func(ctx context.Context, item T) error) error {
	if *logger == nil {
		*logger = slog.New(slog.DiscardHandler)
	}
	tuning.defaults(time.Second)
	p := pump[T]{what: what, logger: *logger, tuning: tuning, claim: claim, start: start}
	return p.run(ctx, nil)
}

// claimedOnce hands a claimed batch of a one-shot starter to the pump:
// started rows are marked, failed ones tried again after a back-off that
// grows with their attempts.
func claimedOnce[T any](b *store.StartBatch[T], err error, tuning *Tuning, id func(T) string, attempts func(T) int) (claimed[T], error) {
	if err != nil {
		return claimed[T]{}, err
	}
	finish := func(ctx context.Context, ok []T, failed []failedStart[T]) error {
		done := make([]string, len(ok))
		for i, it := range ok {
			done[i] = id(it)
		}
		retries := make([]store.StartRetry, len(failed))
		for i, f := range failed {
			retries[i] = store.StartRetry{ID: id(f.item), After: tuning.backoff(attempts(f.item)), Error: f.err.Error()}
		}
		return b.Finish(ctx, done, retries)
	}
	return claimed[T]{items: b.Starts, finish: finish, release: b.Release}, nil
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
