// Package testclock is a clock that tests move by hand, safe for the
// concurrent reads of the code under test.
package testclock

import (
	"sync"
	"time"
)

// Clock reads a time that only Advance changes.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock standing at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time; pass it where code takes a `func() time.Time`.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
