package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/pg"
)

// TestUniqueAcrossMonths: an Idempotency-Key used on the last evening of
// a month and again the next morning names the one event (keys are kept
// in a table that is not partitioned), and an event's id carries its
// month, where (id, received_at) is unique.
func TestUniqueAcrossMonths(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t), "PT10S")
	tn := eventfixture.NewTenant(t, st)
	ctx := context.Background()
	evening := time.Date(2026, 6, 30, 23, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return evening })
	e := tn.Event("a@example.com")
	e.IdempotencyKey, e.RequestHash = "order-77", []byte("body")
	first, err := st.Events.AcceptEvent(ctx, e)
	require.NoError(t, err)

	st.SetClock(func() time.Time { return evening.Add(2 * time.Hour) }) // July
	again, err := st.Events.AcceptEvent(ctx, e)
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, first.EventID, again.EventID)
	var n int
	require.NoError(t, st.DB().Get(&n, `SELECT count(*) FROM events`))
	assert.Equal(t, 1, n)

	ev, err := st.Invites.Event(ctx, tn.AccountID, first.EventID)
	require.NoError(t, err)
	at, ok := pg.IDTime(first.EventID)
	require.True(t, ok, "a new event's id is a UUIDv7")
	assert.Equal(t, ev.ReceivedAt, at, "of its received_at, hence of its month")
	_, err = st.DB().Exec(`INSERT INTO events SELECT * FROM events WHERE id = $1`, first.EventID)
	require.Error(t, err, "one id, one month, one row")
}
