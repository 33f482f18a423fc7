package bench

// The baselines of `touchpoint bench --baseline`: the raw
// ceilings of the PostgreSQL and the Temporal that the measured stack
// uses, taken in the same run with the same count and concurrency.

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/temporalclient"
)

// Baseline is the "baseline" object of bench's JSON line.
type Baseline struct {
	InsertsPerS float64 `json:"inserts_per_s"`
	InsertP99MS float64 `json:"insert_p99_ms"`
	// The same inserts right after the accepts, while the starter, the
	// worker and Temporal are busy with the run's invites.
	InsertsUnderLoadPerS    float64 `json:"inserts_under_load_per_s"`
	InsertUnderLoadP99MS    float64 `json:"insert_under_load_p99_ms"`
	WorkflowStartsPerS      float64 `json:"workflow_starts_per_s"`
	WorkflowCompletionsPerS float64 `json:"workflow_completions_per_s"`
}

// benchBaselineWorkflowName is the trivial workflow of the baselines; it
// runs on task queues of its own, never on Touchpoint's.
const benchBaselineWorkflowName = "TouchpointBenchBaseline"

// runBaselines measures the quiet stack's ceilings: bare inserts with
// ins, then Temporal's bare starts and one-activity completions.
func runBaselines(ctx context.Context, logTo io.Writer, t Target, ins *insertBaseline, n, c int, runID string,
	prog *progress, b *Baseline) error {
	var err error
	if b.InsertsPerS, b.InsertP99MS, err = ins.measure(ctx, "pg inserts", n, c, prog); err != nil {
		return err
	}
	tc, err := t.dialTemporal(ctx, logTo)
	if err != nil {
		return err
	}
	defer tc.Close()
	if err := baselineCompletions(ctx, tc, n, c, runID, prog, b); err != nil {
		return err
	}
	return baselineStarts(ctx, tc, n, c, runID, prog, b)
}

// dialTemporal connects to the target's Temporal, its SDK warnings to
// logTo.
func (t Target) dialTemporal(ctx context.Context, logTo io.Writer) (client.Client, error) {
	opts, err := t.Temporal.ClientOptions()
	if err != nil {
		return nil, fmt.Errorf("temporal: %w", err)
	}
	opts.Logger = sdklog.NewStructuredLogger(slog.New(slog.NewJSONHandler(logTo, &slog.HandlerOptions{Level: slog.LevelWarn})))
	return temporalclient.Dial(ctx, opts)
}

// insertBaseline times bare single-row inserts (sqlx + lib/pq, the
// store's pool settings) into a scratch table of its own.
type insertBaseline struct {
	db      *sqlx.DB
	table   *eventdb.InsertScratch
	payload []byte
}

func openInsertBaseline(ctx context.Context, databaseURL string, c int, runID string) (*insertBaseline, error) {
	db, err := store.Open(ctx, databaseURL)
	if err != nil {
		return nil, err
	}
	ins := &insertBaseline{db: db, payload: benchBodies("bench-insert", store.NewID("chn"), runID, 1)[0]}
	if ins.table, err = storeset.New(db, "").Events.CreateInsertScratch(ctx, "bench_insert_"+runID); err != nil {
		db.Close()
		return nil, err
	}
	if err := warmPool(ctx, db, c); err != nil {
		ins.close()
		return nil, err
	}
	return ins, nil
}

// measure inserts n rows, c at once, and returns the rate and the p99 in ms.
func (ins *insertBaseline) measure(ctx context.Context, label string, n, c int, prog *progress) (perS, p99MS float64, err error) {
	lat, elapsed, err := timeEach(ctx, label, n, c, prog, func(int) error {
		return ins.table.Insert(ctx, store.NewID("evt"), time.Now(), ins.payload)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("insert: %w", err)
	}
	return round(float64(n)/elapsed.Seconds(), 1), percentileMS(lat, 99), nil
}

func (ins *insertBaseline) close() {
	ins.table.Drop(context.Background()) // a leftover scratch table harms nothing
	ins.db.Close()
}

// warmPool opens c connections before the clock starts, as a running
// API has them: a baseline that paid for connection set-up would be a
// lower bar than the ceiling it stands for.
func warmPool(ctx context.Context, db *sqlx.DB, c int) error {
	conns := make([]*sql.Conn, 0, c)
	defer func() {
		for _, conn := range conns {
			conn.Close() // back to the idle pool
		}
	}()
	for range c {
		conn, err := db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("warm up the pool: %w", err)
		}
		conns = append(conns, conn)
		if err := conn.PingContext(ctx); err != nil {
			return fmt.Errorf("warm up the pool: %w", err)
		}
	}
	return nil
}

// baselineStarts times n bare workflow starts, c at once, on a task queue
// no worker polls; the workflows time out by themselves after 10 minutes
// (with a self-started dev, they go with it).
func baselineStarts(ctx context.Context, tc client.Client, n, c int, runID string, prog *progress, b *Baseline) error {
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
func baselineCompletions(ctx context.Context, tc client.Client, n, c int, runID string, prog *progress, b *Baseline) error {
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
// each call and of them all; a failure stops it and is returned.
func timeEach(ctx context.Context, label string, n, c int, prog *progress, op func(i int) error) ([]time.Duration, time.Duration, error) {
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	run := timeAll(inner, label, n, c, prog, func(i int) error {
		err := op(i)
		if err != nil {
			cancel()
		}
		return err
	})
	lat := make([]time.Duration, n)
	for i, o := range run.outcomes {
		if o.answer != nil {
			return nil, 0, o.answer
		}
		lat[i] = o.latency
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	return lat, run.elapsed, nil
}
