package memo

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a settable time for a Func under test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestGetRemembersForTheTTL(t *testing.T) {
	t.Parallel()
	errDown := errors.New("down")
	var calls atomic.Int32
	results := []error{nil, errDown, nil}
	m := New(time.Second, func(context.Context) (int, error) {
		n := calls.Add(1)
		return int(n), results[n-1]
	})
	c := &clock{t: time.Unix(1000, 0)}
	m.now = c.now
	ctx := context.Background()

	steps := []struct {
		advance time.Duration
		want    int
		wantErr error
	}{
		{0, 1, nil},
		{999 * time.Millisecond, 1, nil}, // within the ttl: remembered
		{time.Millisecond, 2, errDown},   // the ttl is over: asked again
		{500 * time.Millisecond, 2, errDown},
		{time.Second, 3, nil}, // an error is remembered no longer than a value
	}
	for i, s := range steps {
		c.advance(s.advance)
		v, err := m.Get(ctx)
		assert.Equal(t, s.want, v, "step %d", i)
		assert.Equal(t, s.wantErr, err, "step %d", i)
	}
	assert.EqualValues(t, 3, calls.Load())
}

func TestGetDoesNotRememberACancelledCall(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	m := New(time.Hour, func(ctx context.Context) (int32, error) {
		return calls.Add(1), ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Get(ctx)
	require.ErrorIs(t, err, context.Canceled)
	v, err := m.Get(context.Background())
	require.NoError(t, err, "the cancelled call was not remembered")
	assert.EqualValues(t, 2, v)
	v, err = m.Get(context.Background())
	require.NoError(t, err)
	assert.EqualValues(t, 2, v, "the good one was")
}

// TestConcurrentCallersShareOneCall: a burst of probes while f runs makes
// one call of f, not one each.
func TestConcurrentCallersShareOneCall(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	release := make(chan struct{})
	m := New(time.Hour, func(context.Context) (int32, error) {
		<-release
		return calls.Add(1), nil
	})
	var wg sync.WaitGroup
	got := make([]int32, 20)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = m.Get(context.Background())
		}()
	}
	close(release)
	wg.Wait()
	assert.EqualValues(t, 1, calls.Load())
	for _, v := range got {
		assert.EqualValues(t, 1, v)
	}
}
