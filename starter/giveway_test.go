package starter_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/giveway"
	"github.com/touchpoint/touchpoint/internal/testclock"
)

// TestStarterGivesWayToAccepts: while the accept path of its process is
// busy the starter starts nothing and hands its rows back untouched;
// an order that has waited the gate's MaxHold starts whatever the load;
// once the accepts stop the starter is back at full speed. The gate and
// the store read one hand-moved clock, so nothing here depends on timing.
func TestStarterGivesWayToAccepts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clock := testclock.New(time.Now())
	e.st.SetClock(clock.Now)
	const maxHold = 15 * time.Second
	gate := giveway.New(giveway.Config{Max: 4, Interval: 50 * time.Millisecond, MaxHold: maxHold}, clock.Now)

	// A simulated burst: eight accepts in flight for as long as it lasts.
	var endLoad []func()
	for range 8 {
		endLoad = append(endLoad, gate.BeginAccept(1))
	}
	require.Zero(t, gate.Stats().Limit, "the burst has shut the gate")

	s := e.starter(e.temporal)
	s.Gate = gate
	run(t, s.Run)
	held := e.accept(t, 3)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Positive(c, gate.Stats().Held, "the starter asked the gate")
	}, 30*time.Second, 10*time.Millisecond)
	for _, r := range e.rows(t) {
		assert.False(t, r.Done, "held back during the burst: %s", r.EventID)
		assert.Zero(t, r.Attempts, "handed back untouched: %s", r.EventID)
		assert.False(t, r.LastError.Valid)
	}
	_, err := e.describeErr(held[0], "")
	assert.Error(t, err, "no workflow yet")

	// The burst goes on, but the orders have waited their longest.
	clock.Advance(maxHold)
	e.waitDone(t, held, 30*time.Second)
	for _, id := range held {
		e.describe(t, id, "")
	}
	overdue := gate.Stats().Overdue
	assert.GreaterOrEqual(t, overdue, int64(len(held)), "started over the limit")

	// The burst ends: eight quiet intervals later the limit is whole and
	// new orders start at once, not as overdue ones.
	for _, end := range endLoad {
		end()
	}
	for range 9 {
		clock.Advance(50 * time.Millisecond)
	}
	require.Equal(t, 4, gate.Stats().Limit)
	after := e.accept(t, 3)
	e.waitDone(t, after, 30*time.Second)
	assert.Equal(t, overdue, gate.Stats().Overdue, "started within the limit")
	assert.Empty(t, e.logs.warnings())
}
