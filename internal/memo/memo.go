// Package memo remembers the result of a function for a short while, so
// that callers nobody authenticates — health probes, metric scrapes — can
// ask as often as they like while the database sees at most one query per
// interval.
package memo

import (
	"context"
	"sync"
	"time"
)

// Func is f remembered for a time. Its zero value is not usable: use New.
type Func[T any] struct {
	f   func(context.Context) (T, error)
	ttl time.Duration
	now func() time.Time

	// mu is held while f runs: concurrent callers wait for that one call
	// instead of starting their own.
	mu  sync.Mutex
	at  time.Time // when val and err were had; zero: never
	val T
	err error
}

// New returns f remembered for ttl: a Get within ttl of the last call of f
// gets that call's result, error included — a database that is down is
// not asked again any sooner than one that is up.
func New[T any](ttl time.Duration, f func(context.Context) (T, error)) *Func[T] {
	return &Func[T]{f: f, ttl: ttl, now: time.Now}
}

// Get returns the remembered result, calling f with ctx when it is older
// than the ttl. A call cut short by the end of ctx (the caller went away)
// is not remembered: it says nothing of what f checks.
func (m *Func[T]) Get(ctx context.Context) (T, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.at.IsZero() && m.now().Sub(m.at) < m.ttl {
		return m.val, m.err
	}
	val, err := m.f(ctx)
	if ctx.Err() != nil {
		return val, err
	}
	m.val, m.err, m.at = val, err, m.now()
	return val, err
}
