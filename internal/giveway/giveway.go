// Package giveway lets the workflow starters give way to the accept path
// of the same process. The client waiting on POST /events is waiting now;
// the invites of the events it sends are due later. So while accepts
// crowd in, the starters start fewer workflows (none at all under a
// steady burst) and catch up at full speed when the burst ends.
//
// A Gate is shared by the two sides. The accept path reports each request
// it works on (BeginAccept, and the func it returns when done); a batch
// weighs more than a single event. The starters ask the Gate before each
// workflow start (Admit) and report its end (Done). The Gate keeps a
// limit on the starts in flight: the moment the accept path has BusyAt
// or more in flight at once, the limit falls to zero, and it stays there
// through every Interval that is busy too; in every quiet Interval it
// grows by Step, up to Max. It shuts at once rather than step by step
// because a workflow started during a burst does not cost its start
// alone: it runs at once, beside the accepts, on the same cores (in
// `touchpoint dev`, the same process), and a handful of them slow the
// first half-second of a burst more than the starts themselves.
//
// No start order starves: an order that has waited MaxHold since it was
// written is admitted whatever the load. That bounds what giving way can
// add to an invite's lag.
//
// The Gate does no I/O and starts no goroutine; it reads the time from
// the clock it is given, so its behaviour is a function of the calls and
// the times they are made at. A nil *Gate admits everything.
package giveway

import (
	"sync"
	"time"
)

// Defaults of a Config's zero fields.
const (
	DefaultMax      = 16
	DefaultBusyAt   = 4
	DefaultInterval = 50 * time.Millisecond
	DefaultMaxHold  = 15 * time.Second
)

// Config shapes a Gate; zero fields take the defaults.
type Config struct {
	// Max is the most starts in flight when the accept path is quiet: the
	// starter's own concurrency (default 16).
	Max int
	// Step is added to the limit after each quiet Interval (default
	// Max/8, at least 1): from zero to Max in eight Intervals.
	Step int
	// BusyAt is the accept load (requests in flight at once, a batch
	// counting by its size, see BatchWeight) that makes an Interval busy
	// (default 4).
	BusyAt int
	// Interval is how often the limit is adjusted (default 50 ms).
	Interval time.Duration
	// MaxHold is the longest an order is held back: older ones start
	// whatever the load (default 15 s).
	MaxHold time.Duration
}

func (c *Config) defaults() {
	if c.Max <= 0 {
		c.Max = DefaultMax
	}
	if c.Step <= 0 {
		c.Step = max(c.Max/8, 1)
	}
	if c.BusyAt <= 0 {
		c.BusyAt = DefaultBusyAt
	}
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.MaxHold <= 0 {
		c.MaxHold = DefaultMaxHold
	}
}

// BatchWeight is the load a request accepting n events counts for: one,
// and one more for every 100 events, so that a batch of 500 alone makes
// the accept path busy.
func BatchWeight(n int) int { return 1 + n/100 }

// Stats are the Gate's counters, for metrics and tests.
type Stats struct {
	// Limit is the starts allowed in flight now; InFlight the starts in
	// flight; Accepts the accept load in flight.
	Limit, InFlight, Accepts int
	// Held counts the refusals, Overdue the orders admitted over the
	// limit because they had waited MaxHold.
	Held, Overdue int64
}

// Gate is the limit the starters keep, set by the accept path's load. It
// is safe for concurrent use.
type Gate struct {
	cfg Config
	now func() time.Time

	mu       sync.Mutex
	limit    int       // starts allowed in flight
	inFlight int       // starts in flight
	accepts  int       // accept load in flight
	peak     int       // the most accept load at once in this interval
	ends     time.Time // when this interval ends
	held     int64
	overdue  int64
}

// New returns a Gate that reads the time from now and starts open.
func New(cfg Config, now func() time.Time) *Gate {
	cfg.defaults()
	return &Gate{cfg: cfg, now: now, limit: cfg.Max, ends: now().Add(cfg.Interval)}
}

// Interval is how often the limit changes: how often a starter that was
// refused should ask again.
func (g *Gate) Interval() time.Duration {
	if g == nil {
		return DefaultInterval
	}
	return g.cfg.Interval
}

// BeginAccept records an accept request of the given weight (1 for one
// event, BatchWeight for a batch) and returns the func that records its
// end. A load that makes the accept path busy shuts the gate at once.
func (g *Gate) BeginAccept(weight int) (end func()) {
	if g == nil {
		return func() {}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.advance(g.now())
	g.accepts += weight
	g.peak = max(g.peak, g.accepts)
	if g.accepts >= g.cfg.BusyAt {
		g.limit = 0
	}
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.advance(g.now())
		g.accepts -= weight
	}
}

// Admit asks to start the workflow of an order written at since. It is
// admitted while fewer than the limit's starts are in flight, or at any
// load once it has waited MaxHold; then the caller must call Done when
// the start ends. Otherwise retry is when to ask again: the end of this
// Interval, or the moment the order has waited MaxHold, whichever comes
// first (a start that ends may free a slot sooner).
func (g *Gate) Admit(since time.Time) (ok bool, retry time.Time) {
	if g == nil {
		return true, time.Time{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	free, overdue, retry := g.check(since)
	switch {
	case free:
	case overdue:
		g.overdue++
	default:
		g.held++
		return false, retry
	}
	g.inFlight++
	return true, time.Time{}
}

// Open reports whether an order written at since would be admitted now,
// without admitting it, and if not, when to ask again (as Admit does).
func (g *Gate) Open(since time.Time) (ok bool, retry time.Time) {
	if g == nil {
		return true, time.Time{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	free, overdue, retry := g.check(since)
	if free || overdue {
		return true, time.Time{}
	}
	return false, retry
}

// check is the rule of Admit and Open, with mu held: an order written at
// since may start when a slot is free, or when it has waited MaxHold;
// otherwise retry is the end of this Interval or the moment it will have
// waited MaxHold, whichever comes first.
func (g *Gate) check(since time.Time) (free, overdue bool, retry time.Time) {
	now := g.now()
	g.advance(now)
	due := since.Add(g.cfg.MaxHold)
	if g.inFlight < g.limit {
		return true, false, time.Time{}
	}
	if !now.Before(due) {
		return false, true, time.Time{}
	}
	return false, false, earlier(g.ends, due)
}

// Done records the end of an admitted start.
func (g *Gate) Done() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.advance(g.now())
	g.inFlight--
}

// Stats reads the counters.
func (g *Gate) Stats() Stats {
	if g == nil {
		return Stats{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.advance(g.now())
	return Stats{Limit: g.limit, InFlight: g.inFlight, Accepts: g.accepts, Held: g.held, Overdue: g.overdue}
}

// advance closes every Interval that ended by now: a quiet one adds Step
// to the limit (a busy one shut the gate when it became busy). The next
// Interval begins with the load still in flight as its peak, and if that
// is busy, shut.
func (g *Gate) advance(now time.Time) {
	for !now.Before(g.ends) {
		if g.peak < g.cfg.BusyAt {
			g.limit = min(g.limit+g.cfg.Step, g.cfg.Max)
		}
		g.peak = g.accepts
		busy := g.accepts >= g.cfg.BusyAt
		if busy {
			g.limit = 0
		}
		g.ends = g.ends.Add(g.cfg.Interval)
		if settled := busy || g.limit == g.cfg.Max; settled && g.ends.Before(now) {
			// The load has not changed since, so every further Interval
			// until now leaves the limit where it is: skip them.
			g.ends = g.ends.Add(now.Sub(g.ends) / g.cfg.Interval * g.cfg.Interval)
		}
	}
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
