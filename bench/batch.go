package bench

// The batch measurements of `touchpoint bench`: POST
// /events/batch at several batch sizes beside a bare COPY of the same
// rows into a table of the events table's shape, and a backfill: how fast
// the starter drains its backlog beside bare StartWorkflow calls, and the
// stack's peak memory meanwhile.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// starterConcurrency is the starter's default number of starts in flight
// (starter.Starter.Concurrency): the bare-start baseline of the drain
// runs at the same per starter.
const starterConcurrency = 16

// BatchResult is the "batch" object of bench's JSON line.
type BatchResult struct {
	Concurrency int               `json:"concurrency"`
	Sizes       []BatchSizeResult `json:"sizes"`
	Backfill    *BackfillResult   `json:"backfill,omitempty"`
}

// BatchSizeResult is one batch size: events accepted per second through
// POST /events/batch and the latency of its requests, beside a bare COPY
// of the same rows in batches of the same size at the same concurrency.
type BatchSizeResult struct {
	Size           int            `json:"size"`
	Events         int            `json:"events"`
	Accepted       int            `json:"accepted"`
	AcceptedPerS   float64        `json:"accepted_per_s"`
	P50MS          float64        `json:"p50_ms"`
	P99MS          float64        `json:"p99_ms"`
	Errors         map[string]int `json:"errors"`
	CopyPerS       float64        `json:"copy_per_s,omitempty"`
	CopyP99MS      float64        `json:"copy_p99_ms,omitempty"`
	AcceptedVsCopy float64        `json:"accepted_vs_copy,omitempty"`
}

// BackfillResult is a backfill of Events events in batches of 500: the
// accept rate, the start orders still waiting when the last batch was
// answered, how fast the starters then started the workflows of all of
// them or of the first Drained (Options.DrainSample) beside
// bare StartWorkflow calls at the starters' combined concurrency, and
// peak memory. When bench started dev, the backfill is posted to a
// `touchpoint api` process it starts beside dev (same database and
// Temporal), whose peak RSS from its start to the end of the drain is
// APIPeakRSSMB; DevPeakRSSMB is dev's (API, starter, worker and embedded
// Temporal in one process) over the same span. Both starters, dev's and
// the API process's, drain the backlog.
type BackfillResult struct {
	Events         int      `json:"events"`
	Accepted       int      `json:"accepted"`
	AcceptedPerS   float64  `json:"accepted_per_s"`
	Backlog        int      `json:"backlog"`
	Starters       int      `json:"starters,omitempty"`
	Drained        int      `json:"drained"`
	DrainPerS      float64  `json:"drain_per_s"`
	BareStartsPerS float64  `json:"bare_starts_per_s,omitempty"`
	DrainVsStarts  float64  `json:"drain_vs_starts,omitempty"`
	APIPeakRSSMB   *float64 `json:"api_peak_rss_mb,omitempty"`
	DevPeakRSSMB   *float64 `json:"dev_peak_rss_mb,omitempty"`
}

// batchRun is the setting of the batch measurements.
type batchRun struct {
	o     Options
	api   *benchAPI
	st    *store.Store // nil without a database URL
	dev   *devChild    // nil against a running stack
	typ   string       // an event type whose settings are inactive
	runID string
	prog  *progress
}

// measureBatches runs the batch measurements of o. Their events are of
// an event type with inactive settings: each gets its workflow, which
// records "skipped" at once, so the runs measure accepts and starts, not
// mail.
func measureBatches(ctx context.Context, o Options, api *benchAPI, dev *devChild, runID string, prog *progress) (*BatchResult, error) {
	r := &batchRun{o: o, api: api, dev: dev, typ: "bench-batch-" + runID, runID: runID, prog: prog}
	if _, err := api.inactiveEventType(ctx, r.typ); err != nil {
		return nil, err
	}
	if o.Target.DatabaseURL != "" {
		db, err := store.Open(ctx, o.Target.DatabaseURL)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		r.st = storeset.New(db, "")
	}
	res := &BatchResult{Concurrency: o.BatchConcurrency}
	for _, size := range o.BatchSizes {
		s, err := r.size(ctx, size)
		if err != nil {
			return res, err
		}
		res.Sizes = append(res.Sizes, s)
	}
	if o.Backfill > 0 {
		b, err := r.backfill(ctx)
		if err != nil {
			return res, err
		}
		res.Backfill = b
	}
	return res, nil
}

// size measures one batch size, and the bare COPY with Baseline.
func (r *batchRun) size(ctx context.Context, size int) (BatchSizeResult, error) {
	n := r.o.BatchEvents
	res := BatchSizeResult{Size: size, Events: n}
	if err := r.awaitDrained(ctx); err != nil { // each size meets a quiet starter
		return res, err
	}
	bodies := batchBodies(r.typ, r.o.Target.ChannelID, fmt.Sprintf("%s-b%d", r.runID, size), n, size)
	run := r.api.fireBatches(ctx, bodies, r.o.BatchConcurrency, r.prog, fmt.Sprintf("batch %d", size))
	run.summarize(&res)
	if !r.o.Baseline {
		return res, nil
	}
	if err := r.awaitDrained(ctx); err != nil {
		return res, err
	}
	copyPerS, copyP99, err := r.bareCopy(ctx, size, n)
	if err != nil {
		return res, fmt.Errorf("baseline: %w", err)
	}
	res.CopyPerS, res.CopyP99MS = copyPerS, copyP99
	res.AcceptedVsCopy = round(ratio(res.AcceptedPerS, copyPerS), 3)
	return res, nil
}

// bareCopy copies n rows of the events table's shape into a scratch
// table, size rows per COPY (one transaction each), BatchConcurrency at
// once, with the store's pool settings and a warm pool.
func (r *batchRun) bareCopy(ctx context.Context, size, n int) (perS, p99MS float64, err error) {
	db, err := store.Open(ctx, r.o.Target.DatabaseURL)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	if err := warmPool(ctx, db, r.o.BatchConcurrency); err != nil {
		return 0, 0, err
	}
	table, err := storeset.New(db, "").Events.CreateEventsScratch(ctx, fmt.Sprintf("bench_copy_%s_%d", r.runID, size))
	if err != nil {
		return 0, 0, err
	}
	defer table.Drop(context.WithoutCancel(ctx)) // a leftover scratch table harms nothing
	rows := newEventsOf(r.typ, r.o.Target.ChannelID, r.runID+"-copy", n)
	chunks := (n + size - 1) / size
	lat, elapsed, err := timeEach(ctx, fmt.Sprintf("copy %d", size), chunks, r.o.BatchConcurrency, r.prog, func(i int) error {
		return table.Copy(ctx, rows[i*size:min((i+1)*size, n)])
	})
	if err != nil {
		return 0, 0, err
	}
	return round(float64(n)/elapsed.Seconds(), 1), percentileMS(lat, 99), nil
}

// backfill posts Backfill events in batches of 500 and measures the drain
// of the start orders they leave. With a self-started dev it posts them
// to an API process started beside dev and reports the peak RSS of both
// (dev's peak is reset first, where Linux allows it).
func (r *batchRun) backfill(ctx context.Context) (*BackfillResult, error) {
	n := r.o.Backfill
	res := &BackfillResult{Events: n}
	if err := r.awaitDrained(ctx); err != nil {
		return res, err
	}
	api := r.api
	if r.dev != nil {
		exe := cmp.Or(r.o.APIExecutable, r.o.Executable)
		proc, err := r.dev.startAPI(ctx, exe)
		if err != nil {
			return res, err
		}
		defer proc.terminate()
		defer func() { res.APIPeakRSSMB = proc.peakRSSMB() }() // to the end of the drain
		api = r.api.at(proc.baseURL)
		res.Starters = 2
		r.dev.resetPeakRSS()
	}
	// Bodies are made as they are sent: a million events held at once
	// would be bench's memory, not the stack's.
	const size = 500
	chunks := (n + size - 1) / size
	lat := make([]time.Duration, chunks)
	statuses := make([][]int, chunks)
	done := r.prog.phase("backfill", n)
	start := time.Now()
	fanOut(ctx, chunks, r.o.BatchConcurrency, func(i int) {
		k := min(size, n-i*size)
		body := batchBody(r.typ, r.o.Target.ChannelID, fmt.Sprintf("%s-f%d", r.runID, i), k)
		t0 := time.Now()
		statuses[i] = api.postBatch(ctx, body)
		lat[i] = time.Since(t0)
		r.prog.add(k)
	})
	elapsed := time.Since(start)
	done()
	var run batchPostRun
	run.elapsed = elapsed
	for i := range chunks {
		run.outcomes = append(run.outcomes, timed[[]int]{statuses[i], lat[i]})
	}
	var acc BatchSizeResult
	run.summarize(&acc)
	res.Accepted, res.AcceptedPerS = acc.Accepted, acc.AcceptedPerS
	if r.st != nil {
		pending, _, err := r.st.Events.OutboxBacklog(ctx)
		if err != nil {
			return res, err
		}
		res.Backlog = pending
		drained, elapsed, err := r.timeDrain(ctx, pending)
		if err != nil {
			return res, err
		}
		res.Drained = drained
		res.DrainPerS = round(float64(drained)/max(elapsed, time.Millisecond).Seconds(), 1)
	}
	if r.dev != nil {
		res.DevPeakRSSMB = r.dev.peakRSSMB()
	}
	if r.o.Baseline && res.Backlog > 0 {
		starts, err := r.bareStarts(ctx, min(res.Backlog, 5000), starterConcurrency*max(res.Starters, 1))
		if err != nil {
			return res, fmt.Errorf("baseline: %w", err)
		}
		res.BareStartsPerS = starts
		res.DrainVsStarts = round(ratio(res.DrainPerS, starts), 3)
	}
	return res, nil
}

// timeDrain times the starters' drain of the pending orders: all of
// them, or with DrainSample the first DrainSample (a million orders take
// the better part of an hour at a few hundred starts per second), after
// which the rest are discarded, so that no backlog competes with what is
// measured next. It returns how many orders it timed.
func (r *batchRun) timeDrain(ctx context.Context, pending int) (int, time.Duration, error) {
	t0 := time.Now()
	if sample := r.o.DrainSample; sample > 0 && pending > sample {
		last, ok, err := r.st.Events.NthPendingOrder(ctx, sample)
		if err != nil {
			return 0, 0, err
		}
		for ok {
			done, err := r.st.Events.OrderDone(ctx, last)
			if err != nil {
				return 0, 0, err
			}
			if done {
				break
			}
			select {
			case <-ctx.Done():
				return 0, 0, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
		if ok {
			elapsed := time.Since(t0)
			if _, err := r.st.Events.DiscardPendingOrders(ctx); err != nil {
				return 0, 0, err
			}
			return sample, elapsed, r.awaitDrained(ctx)
		}
	}
	err := r.awaitDrained(ctx)
	return pending, time.Since(t0), err
}

// bareStarts times n bare workflow starts, concurrency at once.
func (r *batchRun) bareStarts(ctx context.Context, n, concurrency int) (float64, error) {
	tc, err := r.o.Target.dialTemporal(ctx, r.o.Stderr)
	if err != nil {
		return 0, err
	}
	defer tc.Close()
	var b Baseline
	if err := baselineStarts(ctx, tc, n, concurrency, r.runID+"-drain", r.prog, &b); err != nil {
		return 0, err
	}
	return b.WorkflowStartsPerS, nil
}

// awaitDrained waits until no start order is pending; without a
// database URL it does not wait.
func (r *batchRun) awaitDrained(ctx context.Context) error {
	if r.st == nil {
		return nil
	}
	for {
		pending, _, err := r.st.Events.OutboxBacklog(ctx)
		if err != nil {
			return fmt.Errorf("outbox backlog: %w", err)
		}
		if pending == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d start orders still pending: %w", pending, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// batchBodies returns the POST /events/batch bodies of n events, size
// per request.
func batchBodies(typ, channelID, runID string, n, size int) [][]byte {
	var out [][]byte
	for i := 0; i < n; i += size {
		out = append(out, batchBody(typ, channelID, fmt.Sprintf("%s-%d", runID, i), min(size, n-i)))
	}
	return out
}

// batchBody is one POST /events/batch body of n events.
func batchBody(typ, channelID, runID string, n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"events":[`)
	for i, ev := range benchBodies(typ, channelID, runID, n) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(ev)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// newEventsOf is what the store is given for n of bench's events, for
// the bare COPY.
func newEventsOf(typ, channelID, runID string, n int) []eventdb.NewEvent {
	bodies := benchBodies(typ, channelID, runID, n)
	events := make([]eventdb.NewEvent, n)
	now := time.Now().UTC()
	for i := range events {
		events[i] = eventdb.NewEvent{AccountID: "acc-bench", Type: typ, ChannelID: channelID,
			CustomerEmail:        fmt.Sprintf("bench-%s-%d@example.com", runID, i),
			TransactionReference: fmt.Sprintf("order-%d", i), TransactionDate: now, Payload: bodies[i]}
	}
	return events
}

// batchPostRun is every answer of a batch phase, each the statuses of
// one POST /events/batch's items (none when the request failed: its
// status alone, 0 for no answer), and how long it lasted.
type batchPostRun timedRun[[]int]

// fireBatches posts every body from concurrency clients at once.
func (a *benchAPI) fireBatches(ctx context.Context, bodies [][]byte, concurrency int, prog *progress, label string) batchPostRun {
	return batchPostRun(timeAll(ctx, label, len(bodies), concurrency, prog, func(i int) []int { return a.postBatch(ctx, bodies[i]) }))
}

// postBatch sends one batch and returns its items' statuses, or the
// answer's status alone (0 without one) when it is not a 200.
func (a *benchAPI) postBatch(ctx context.Context, body []byte) []int {
	res, err := a.send(ctx, jsonPost(ctx, a.t.BaseURL+"/events/batch", body))
	if err != nil {
		return []int{0}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return []int{0}
	}
	if res.StatusCode != http.StatusOK {
		return []int{res.StatusCode}
	}
	var out struct {
		Items []struct{ Status int } `json:"items"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return []int{0}
	}
	statuses := make([]int, len(out.Items))
	for i, it := range out.Items {
		statuses[i] = it.Status
	}
	return statuses
}

// summarize fills the accept figures of res: events accepted per second,
// the p50/p99 of the batch requests that were answered 200, and every
// other status counted by event ("transport" for requests that got no
// answer).
func (r batchPostRun) summarize(res *BatchSizeResult) {
	res.Errors = map[string]int{"503": 0}
	var lat []time.Duration
	for _, o := range r.outcomes {
		if len(o.answer) == 1 && o.answer[0] == 0 {
			res.Errors["transport"]++
			continue
		}
		lat = append(lat, o.latency)
		for _, s := range o.answer {
			if s == http.StatusAccepted {
				res.Accepted++
			} else {
				res.Errors[strconv.Itoa(s)]++
			}
		}
	}
	res.AcceptedPerS = round(float64(res.Accepted)/r.elapsed.Seconds(), 1)
	res.P50MS = percentileMS(lat, 50)
	res.P99MS = percentileMS(lat, 99)
}
