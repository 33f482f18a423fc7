package starter

import (
	"context"
	"log/slog"
	"sync"
	"time"
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

// pump is the loop both starters (invites, webhook deliveries) run over
// their outbox: claim a batch of due rows, start their workflows, record
// the outcome, and go on while whole batches keep starting.
type pump[T any] struct {
	what   string // names the rows in logs
	logger *slog.Logger
	tuning *Tuning
	claim  func(ctx context.Context, limit int) (claimed[T], error)
	start  func(ctx context.Context, item T) error
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
// makes no progress (Temporal down: its rows were rescheduled).
func (p pump[T]) drain(ctx context.Context) {
	for ctx.Err() == nil {
		started, claimed, err := p.startBatch(ctx)
		if err != nil {
			if ctx.Err() == nil {
				p.logger.Error(p.what+" batch", "error", err)
			}
			return
		}
		if claimed < p.tuning.BatchSize || started == 0 {
			return
		}
	}
}

// startBatch claims one batch and starts its workflows.
func (p pump[T]) startBatch(ctx context.Context) (started, claimedRows int, err error) {
	b, err := p.claim(ctx, p.tuning.BatchSize)
	if err != nil {
		return 0, 0, err
	}
	if len(b.items) == 0 {
		return 0, 0, b.release()
	}
	ok, failed := startEach(ctx, b.items, p.tuning.Concurrency, p.start)
	if ctx.Err() != nil {
		// Shutting down: hand the whole batch back untouched; the next
		// starter recognises the starts that did happen.
		return 0, len(b.items), b.release()
	}
	if len(failed) > 0 {
		p.logger.Warn(p.what+" workflow starts failed; will retry", "failed", len(failed), "started", len(ok), "error", failed[0].err)
	}
	if err := b.finish(ctx, ok, failed); err != nil {
		return 0, len(b.items), err
	}
	return len(ok), len(b.items), nil
}

// startEach runs start for every item of a claimed batch, at most
// concurrency at once, and returns the items that started and those that
// failed.
func startEach[T any](ctx context.Context, items []T, concurrency int, start func(context.Context, T) error) (started []T, failed []failedStart[T]) {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, concurrency)
	)
	for _, it := range items {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := start(ctx, it)
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
	return started, failed
}
