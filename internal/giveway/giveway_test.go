package giveway_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/giveway"
	"github.com/touchpoint/touchpoint/internal/testclock"
)

var t0 = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func newGate(t *testing.T) (*giveway.Gate, *testclock.Clock) {
	t.Helper()
	clock := testclock.New(t0)
	return giveway.New(giveway.Config{Max: 16, Step: 2, BusyAt: 4, Interval: 50 * time.Millisecond, MaxHold: 15 * time.Second}, clock.Now), clock
}

// admitAll admits orders written at since until the gate refuses one,
// and returns how many it admitted.
func admitAll(g *giveway.Gate, since time.Time) int {
	n := 0
	for {
		ok, _ := g.Admit(since)
		if !ok {
			return n
		}
		n++
	}
}

// burst is a simulated accept load of n requests in flight at once.
func burst(g *giveway.Gate, n int) (end func()) {
	ends := make([]func(), n)
	for i := range ends {
		ends[i] = g.BeginAccept(1)
	}
	return func() {
		for _, e := range ends {
			e()
		}
	}
}

func TestQuietGateAdmitsMaxAndFreesSlotsOnDone(t *testing.T) {
	t.Parallel()
	g, clock := newGate(t)
	assert.Equal(t, 16, admitAll(g, clock.Now()), "a quiet accept path leaves the starters their whole concurrency")
	ok, retry := g.Admit(clock.Now())
	assert.False(t, ok)
	assert.Equal(t, t0.Add(50*time.Millisecond), retry, "ask again when the interval ends")
	g.Done()
	ok, _ = g.Admit(clock.Now())
	assert.True(t, ok, "a finished start frees its slot")
	for range 16 {
		g.Done()
	}
	// Accepts below BusyAt are not a load to give way to.
	end := burst(g, 3)
	clock.Advance(time.Second)
	assert.Equal(t, 16, g.Stats().Limit)
	end()
}

func TestGateShedsUnderAcceptLoadAndRecovers(t *testing.T) {
	t.Parallel()
	g, clock := newGate(t)
	end := burst(g, 32)
	assert.Zero(t, g.Stats().Limit, "the load shuts the gate the moment it appears")

	var limits []int
	for range 5 {
		clock.Advance(50 * time.Millisecond)
		limits = append(limits, g.Stats().Limit)
	}
	assert.Equal(t, []int{0, 0, 0, 0, 0}, limits, "shut through every busy interval")
	assert.Zero(t, admitAll(g, clock.Now()), "a fresh order is held back while the burst lasts")
	clock.Advance(5 * time.Second)
	assert.Zero(t, admitAll(g, clock.Now().Add(-time.Second)), "still held after seconds of burst")
	st := g.Stats()
	assert.Equal(t, 32, st.Accepts)
	assert.Equal(t, int64(2), st.Held)

	// The burst ends: the limit grows by Step every quiet interval and the
	// starters are back at full speed eight intervals later.
	end()
	limits = nil
	for range 9 {
		clock.Advance(50 * time.Millisecond)
		limits = append(limits, g.Stats().Limit)
	}
	assert.Equal(t, []int{0, 2, 4, 6, 8, 10, 12, 14, 16}, limits,
		"the interval in which the burst ended was busy; then the limit grows back")
	assert.Equal(t, 16, admitAll(g, clock.Now()), "caught up at full speed")
}

func TestBatchWeighsByItsSize(t *testing.T) {
	t.Parallel()
	g, _ := newGate(t)
	end := g.BeginAccept(giveway.BatchWeight(500))
	assert.Zero(t, g.Stats().Limit, "one batch of 500 in flight is a load")
	end()
	g2, _ := newGate(t)
	g2.BeginAccept(giveway.BatchWeight(50))()
	assert.Equal(t, 16, g2.Stats().Limit, "a batch of 50 alone is not")
}

// TestGateNeverStarvesAnOrder runs a minute of steady accept load past a
// starter that asks the gate as a real one does — every order when it is
// written, then again at the retry time the gate names — and checks that
// every order starts, none more than MaxHold after it was written, and
// that the orders written after the burst start at once.
func TestGateNeverStarvesAnOrder(t *testing.T) {
	t.Parallel()
	g, clock := newGate(t)
	const maxHold = 15 * time.Second
	type order struct {
		written, started time.Time
		retry            time.Time
	}
	var waiting, started []*order
	tryAll := func() {
		now := clock.Now()
		var still []*order
		for _, o := range waiting {
			if now.Before(o.retry) {
				still = append(still, o)
				continue
			}
			ok, retry := g.Admit(o.written)
			if !ok {
				require.True(t, retry.After(now), "a retry time in the future")
				require.False(t, retry.After(o.written.Add(maxHold)), "never asked to wait past MaxHold")
				o.retry = retry
				still = append(still, o)
				continue
			}
			o.started = now
			started = append(started, o)
			g.Done() // starts take no time here
		}
		waiting = still
	}

	end := burst(g, 32)
	for ms := 0; ms < 60_000; ms += 10 { // a minute of burst, ten orders a second
		if ms%100 == 0 {
			waiting = append(waiting, &order{written: clock.Now()})
		}
		tryAll()
		clock.Advance(10 * time.Millisecond)
	}
	end()
	burstOrders := 600
	for range 200 { // two seconds after the burst, ten orders a second
		if len(waiting)+len(started) < burstOrders+20 && clock.Now().Sub(t0)%(100*time.Millisecond) == 0 {
			waiting = append(waiting, &order{written: clock.Now()})
		}
		tryAll()
		clock.Advance(10 * time.Millisecond)
	}
	for len(waiting) > 0 {
		tryAll()
		clock.Advance(10 * time.Millisecond)
	}

	require.Len(t, started, burstOrders+20)
	var longest time.Duration
	heldBack := 0
	for i, o := range started {
		wait := o.started.Sub(o.written)
		longest = max(longest, wait)
		if wait > 0 {
			heldBack++
		}
		if o.written.After(t0.Add(time.Minute + time.Second)) {
			assert.Zero(t, wait, "order %d, written after the burst, starts at once", i)
		}
	}
	assert.LessOrEqual(t, longest, maxHold, "no order waits longer than MaxHold")
	assert.GreaterOrEqual(t, longest, maxHold-10*time.Millisecond, "the burst held orders back")
	assert.GreaterOrEqual(t, heldBack, burstOrders-1, "the burst's orders were held back")
	assert.Positive(t, g.Stats().Overdue, "overdue orders went over the limit")
}

func TestNilGateAdmitsEverything(t *testing.T) {
	t.Parallel()
	var g *giveway.Gate
	g.BeginAccept(100)()
	ok, _ := g.Admit(t0)
	assert.True(t, ok)
	ok, _ = g.Open(t0)
	assert.True(t, ok)
	g.Done()
	assert.Equal(t, giveway.Stats{}, g.Stats())
}

func TestOpenAdmitsNothing(t *testing.T) {
	t.Parallel()
	g, clock := newGate(t)
	for range 20 {
		ok, _ := g.Open(clock.Now())
		require.True(t, ok)
	}
	assert.Equal(t, 16, admitAll(g, clock.Now()), "Open took no slot")
	end := burst(g, 8)
	clock.Advance(time.Second)
	ok, retry := g.Open(clock.Now())
	assert.False(t, ok)
	assert.Equal(t, clock.Now().Add(50*time.Millisecond), retry)
	ok, _ = g.Open(clock.Now().Add(-15 * time.Second))
	assert.True(t, ok, "an overdue order would go")
	end()
}
