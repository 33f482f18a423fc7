package starter

import (
	"context"
	"sync"
)

// failedStart is an item whose start failed, with why.
type failedStart[T any] struct {
	item T
	err  error
}

// startEach runs start for every item of a claimed batch, at most
// concurrency at once, and returns the items that started and those that
// failed. Both starters (invites, webhook deliveries) hand out their
// claimed rows this way.
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
