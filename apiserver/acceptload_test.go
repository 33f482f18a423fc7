package apiserver_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/internal/giveway"
	"github.com/touchpoint/touchpoint/internal/testclock"
)

// TestAcceptsAreReportedToTheGate: POST /events and POST /events/batch
// tell the gate of the process while they work, a batch by its size, so
// that the starters give way; reads do not. The gate's clock stands
// still, so every load seen falls into one interval.
func TestAcceptsAreReportedToTheGate(t *testing.T) {
	t.Parallel()
	clock := testclock.New(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	gate := giveway.New(giveway.Config{Max: 16, BusyAt: 2}, clock.Now)
	e := newEnv(t, func(o *apiserver.Options) { o.AcceptLoad = gate })
	e.create(t, "/event-types", map[string]any{"name": "checkout"})

	e.acceptEvent(t, e.minimalEvent("checkout"))
	e.do(t, http.MethodGet, "/events", e.token, nil)
	st := gate.Stats()
	assert.Equal(t, 16, st.Limit, "one accept at a time is no load")
	assert.Zero(t, st.Accepts, "and it has ended")

	evs := make([]any, 150)
	for i := range evs {
		ev := e.minimalEvent("checkout")
		ev["customer"] = map[string]any{"email": fmt.Sprintf("c%d@example.com", i)}
		evs[i] = ev
	}
	for _, it := range e.batchItems(t, map[string]any{"events": evs}) {
		require.EqualValues(t, http.StatusAccepted, it["status"], "%v", it)
	}
	st = gate.Stats()
	assert.Zero(t, st.Limit, "a batch of 150 weighs 2: the gate shut")
	assert.Zero(t, st.Accepts)

	// A refused request ends its load too.
	r := e.do(t, http.MethodPost, "/events", e.token, map[string]any{"type": "checkout"})
	assert.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	assert.Zero(t, gate.Stats().Accepts)
}
