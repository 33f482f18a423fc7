package starter

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/touchpoint/touchpoint/internal/giveway"
)

// Tuning paces a starter; zero fields take the defaults.
type Tuning struct {
	// Sweep is how often due rows are looked for when nothing wakes the
	// starter sooner.
	Sweep time.Duration
	// BatchSize rows are claimed at once (default 200); Concurrency starts
	// run in parallel (default 16).
	BatchSize, Concurrency int
	// StartTimeout bounds one StartWorkflow call; default 10 s.
	StartTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before a failed start is
	// tried again: it doubles with the row's attempts from MinBackoff
	// (default 1 s) up to MaxBackoff (default 1 min).
	MinBackoff, MaxBackoff time.Duration
}

func (t *Tuning) defaults(sweep time.Duration) {
	if t.Sweep == 0 {
		t.Sweep = sweep
	}
	if t.BatchSize == 0 {
		t.BatchSize = 200
	}
	if t.Concurrency == 0 {
		t.Concurrency = 16
	}
	if t.StartTimeout == 0 {
		t.StartTimeout = 10 * time.Second
	}
	if t.MinBackoff == 0 {
		t.MinBackoff = time.Second
	}
	if t.MaxBackoff == 0 {
		t.MaxBackoff = time.Minute
	}
}

// backoff grows from MinBackoff to MaxBackoff with the attempts made.
func (t *Tuning) backoff(attempts int) time.Duration {
	d := t.MinBackoff
	for i := 0; i < attempts && d < t.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, t.MaxBackoff)
}

// claimed is one batch of due rows, locked until finish or release.
type claimed[T any] struct {
	items []T
	// finish records which started and reschedules the rest, releasing
	// the rows.
	finish func(ctx context.Context, started []T, failed []failedStart[T]) error
	// release hands the rows back untouched.
	release func() error
}

// failedStart is an item whose start failed, with why.
type failedStart[T any] struct {
	item T
	err  error
}

// pump is the loop the starters (invites, webhook deliveries, test
// sends) run over their outbox: claim a batch of due rows, start their
// workflows, record the outcome, and go on while whole batches keep
// starting. With a gate it gives way to the accept path: each start asks
// the gate first, and rows it holds back are handed back untouched (for
// this starter or another replica) until the gate opens for them.
type pump[T any] struct {
	what   string // names the rows in logs
	logger *slog.Logger
	tuning *Tuning
	claim  func(ctx context.Context, limit int) (claimed[T], error)
	start  func(ctx context.Context, item T) error
	// gate, when not nil, paces the starts; since is when an item was
	// written, which bounds how long the gate may hold it back.
	gate  *giveway.Gate
	since func(T) time.Time
}

// run drains the due rows every sweep, and whenever wake fires (a nil
// wake never does), until ctx is cancelled.
func (p pump[T]) run(ctx context.Context, wake <-chan struct{}) error {
	sweep := time.NewTicker(p.tuning.Sweep)
	defer sweep.Stop()
	for {
		p.drain(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-sweep.C:
		}
	}
}

// drain starts due rows batch by batch until none are left or a batch
// makes no progress (Temporal down: its rows were rescheduled). When the
// gate held rows back it waits for the gate to open for them, and goes on.
func (p pump[T]) drain(ctx context.Context) {
	for ctx.Err() == nil {
		r, err := p.startBatch(ctx)
		if err != nil {
			if ctx.Err() == nil {
				p.logger.Error(p.what+" batch", "error", err)
			}
			return
		}
		if r.held > 0 {
			p.awaitGate(ctx, r.oldestHeld)
			continue
		}
		if r.claimed < p.tuning.BatchSize || r.started == 0 {
			return
		}
	}
}

// awaitGate waits until the gate would admit a row written at since: the
// accept path has gone quiet enough, or the row has waited its longest.
// It asks once per gate interval, without touching the database.
func (p pump[T]) awaitGate(ctx context.Context, since time.Time) {
	tick := time.NewTicker(p.gate.Interval())
	defer tick.Stop()
	for {
		if ok, _ := p.gate.Open(since); ok {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// batchResult is what became of one claimed batch.
type batchResult struct {
	started, claimed int
	// held rows were handed back because the gate held them back; the
	// oldest of them was written at oldestHeld.
	held       int
	oldestHeld time.Time
}

// startBatch claims one batch and starts its workflows.
func (p pump[T]) startBatch(ctx context.Context) (batchResult, error) {
	b, err := p.claim(ctx, p.tuning.BatchSize)
	if err != nil {
		return batchResult{}, err
	}
	if len(b.items) == 0 {
		return batchResult{}, b.release()
	}
	r := batchResult{claimed: len(b.items)}
	ok, failed, held := p.startEach(ctx, b.items)
	if ctx.Err() != nil {
		// Shutting down: hand the whole batch back untouched; the next
		// starter recognises the starts that did happen.
		return r, b.release()
	}
	if len(failed) > 0 {
		p.logger.Warn(p.what+" workflow starts failed; will retry", "failed", len(failed), "started", len(ok), "error", failed[0].err)
	}
	// Rows neither started nor failed (held back) stay as they were.
	if err := b.finish(ctx, ok, failed); err != nil {
		return r, err
	}
	r.started, r.held = len(ok), len(held)
	for i, it := range held {
		if at := p.since(it); i == 0 || at.Before(r.oldestHeld) {
			r.oldestHeld = at
		}
	}
	return r, nil
}

// startEach runs start for the items of a claimed batch, at most
// Concurrency at once and no more than the gate admits, and returns the
// items that started, those that failed, and those the gate held back:
// when it refuses an item while none of this batch's starts is in flight,
// that item and the rest are handed back. While starts are in flight a
// refused item waits for one of them to end, or for the gate's next
// interval.
func (p pump[T]) startEach(ctx context.Context, items []T) (started []T, failed []failedStart[T], held []T) {
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		sem      = make(chan struct{}, p.tuning.Concurrency)
		finished = make(chan struct{}, len(items))
	)
	since := p.since
	if since == nil {
		since = func(T) time.Time { return time.Time{} }
	}
	var wait *time.Timer
	defer func() {
		if wait != nil {
			wait.Stop()
		}
	}()
	for i, it := range items {
		sem <- struct{}{}
		for {
			ok, _ := p.gate.Admit(since(it))
			if ok {
				break
			}
			if len(sem) == 1 { // only our own slot: nothing of ours in flight
				<-sem
				wg.Wait()
				return started, failed, items[i:]
			}
			if wait == nil {
				wait = time.NewTimer(p.gate.Interval())
			} else {
				wait.Reset(p.gate.Interval())
			}
			select {
			case <-finished:
			case <-wait.C:
			case <-ctx.Done():
				<-sem
				wg.Wait()
				return started, failed, items[i:]
			}
		}
		wg.Add(1)
		go func() {
			defer func() { p.gate.Done(); <-sem; finished <- struct{}{}; wg.Done() }()
			err := p.start(ctx, it)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				started = append(started, it)
			} else {
				failed = append(failed, failedStart[T]{it, err})
			}
		}()
	}
	wg.Wait()
	return started, failed, nil
}
