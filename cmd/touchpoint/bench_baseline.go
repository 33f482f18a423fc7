package main

// The baselines of `touchpoint bench --baseline` (SPEC §9): the raw
// ceilings of the PostgreSQL and the Temporal that the measured stack
// uses, taken in the same run with the same count and concurrency.

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/store"
)

// benchBaseline is the "baseline" object of bench's JSON line.
type benchBaseline struct {
	InsertsPerS             float64 `json:"inserts_per_s"`
	InsertP99MS             float64 `json:"insert_p99_ms"`
	WorkflowStartsPerS      float64 `json:"workflow_starts_per_s"`
	WorkflowCompletionsPerS float64 `json:"workflow_completions_per_s"`
}

// benchBaselineWorkflowName is the trivial workflow of the baselines; it
// runs on task queues of its own, never on Touchpoint's.
const benchBaselineWorkflowName = "TouchpointBenchBaseline"

func runBaselines(ctx context.Context, env *environment, t benchTarget, n, c int, runID string, prog *progress) (*benchBaseline, error) {
	var b benchBaseline
	if err := baselineInserts(ctx, t.databaseURL, n, c, runID, prog, &b); err != nil {
		return nil, err
	}
	tc, err := client.Dial(client.Options{HostPort: t.temporalAddress, Namespace: t.space,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))})
	if err != nil {
		return nil, fmt.Errorf("temporal: %w", err)
	}
	defer tc.Close()
	if err := baselineCompletions(ctx, tc, n, c, runID, prog, &b); err != nil {
		return nil, err
	}
	if err := baselineStarts(ctx, tc, n, c, runID, prog, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// baselineInserts times n single-row inserts (sqlx + lib/pq, the store's
// pool settings) into a scratch table, c at once, and drops the table.
func baselineInserts(ctx context.Context, databaseURL string, n, c int, runID string, prog *progress, b *benchBaseline) error {
	db, err := store.Open(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	table := "bench_insert_" + runID
	if _, err := db.ExecContext(ctx, `CREATE TABLE `+table+` (
		id text PRIMARY KEY, received_at timestamptz NOT NULL, payload jsonb NOT NULL)`); err != nil {
		return fmt.Errorf("scratch table: %w", err)
	}
	defer db.ExecContext(context.WithoutCancel(ctx), `DROP TABLE `+table)
	payload := benchBodies("bench-insert", store.NewID("chn"), runID, 1)[0]
	lat, elapsed, err := timeEach(ctx, "pg inserts", n, c, prog, func(int) error {
		_, err := db.ExecContext(ctx, `INSERT INTO `+table+` (id, received_at, payload) VALUES ($1, $2, $3)`,
			store.NewID("evt"), time.Now(), payload)
		return err
	})
	if err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	b.InsertsPerS = round(float64(n)/elapsed.Seconds(), 1)
	b.InsertP99MS = percentileMS(lat, 99)
	return nil
}

// baselineStarts times n bare workflow starts, c at once, on a task queue
// no worker polls; the workflows time out by themselves after 10 minutes
// (with a self-started dev, they go with it).
func baselineStarts(ctx context.Context, tc client.Client, n, c int, runID string, prog *progress, b *benchBaseline) error {
	queue := "bench-baseline-starts-" + runID
	_, elapsed, err := timeEach(ctx, "wf starts", n, c, prog, func(i int) error {
		_, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("bench-start-%s-%d", runID, i),
			TaskQueue: queue, WorkflowExecutionTimeout: 10 * time.Minute}, benchBaselineWorkflowName, benchBaselineInput{})
		return err
	})
	if err != nil {
		return fmt.Errorf("start workflow: %w", err)
	}
	b.WorkflowStartsPerS = round(float64(n)/elapsed.Seconds(), 1)
	return nil
}

// baselineCompletions starts n one-activity workflows, c at once, on a
// bench-only worker and times them from the first start until all have
// completed.
func baselineCompletions(ctx context.Context, tc client.Client, n, c int, runID string, prog *progress, b *benchBaseline) error {
	queue := "bench-baseline-" + runID
	w := sdkworker.New(tc, queue, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(benchBaselineWorkflow, workflow.RegisterOptions{Name: benchBaselineWorkflowName})
	w.RegisterActivity(benchBaselineActivity)
	if err := w.Start(); err != nil {
		return fmt.Errorf("baseline worker: %w", err)
	}
	defer w.Stop()
	runs := make([]client.WorkflowRun, n)
	start := time.Now()
	_, _, err := timeEach(ctx, "wf+act starts", n, c, prog, func(i int) (err error) {
		runs[i], err = tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("bench-done-%s-%d", runID, i),
			TaskQueue: queue, WorkflowExecutionTimeout: 10 * time.Minute}, benchBaselineWorkflowName, benchBaselineInput{})
		return err
	})
	if err == nil {
		_, _, err = timeEach(ctx, "wf+act done", n, c, prog, func(i int) error {
			var out benchBaselineOutput
			return runs[i].Get(ctx, &out)
		})
	}
	if err != nil {
		return fmt.Errorf("one-activity workflows: %w", err)
	}
	b.WorkflowCompletionsPerS = round(float64(n)/time.Since(start).Seconds(), 1)
	return nil
}

type (
	benchBaselineInput  struct{}
	benchBaselineOutput struct{}
)

func benchBaselineWorkflow(ctx workflow.Context, in benchBaselineInput) (benchBaselineOutput, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var out benchBaselineOutput
	err := workflow.ExecuteActivity(ctx, benchBaselineActivity, in).Get(ctx, &out)
	return out, err
}

func benchBaselineActivity(context.Context, benchBaselineInput) (benchBaselineOutput, error) {
	return benchBaselineOutput{}, nil
}

// timeEach calls op(0) … op(n-1), c at once, and returns the duration of
// each call and of them all; it stops at the first failure and returns it.
func timeEach(ctx context.Context, label string, n, c int, prog *progress, op func(i int) error) ([]time.Duration, time.Duration, error) {
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	lat := make([]time.Duration, n)
	var firstErr atomic.Pointer[error]
	done := prog.phase(label, n)
	start := time.Now()
	fanOut(inner, n, c, func(i int) {
		t0 := time.Now()
		if err := op(i); err != nil {
			firstErr.CompareAndSwap(nil, &err)
			cancel()
		}
		lat[i] = time.Since(t0)
		prog.add(1)
	})
	elapsed := time.Since(start)
	done()
	if p := firstErr.Load(); p != nil {
		return nil, 0, *p
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	return lat, elapsed, nil
}
