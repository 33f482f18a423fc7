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
	"github.com/touchpoint/touchpoint/storeset"
)

func TestHousekeeping(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "PT10S")
	tn := eventfixture.NewTenant(t, st)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return t0 })

	accept := func(key string) string {
		e := tn.Event("a@example.com")
		e.IdempotencyKey, e.RequestHash = key, []byte(key)
		acc, err := st.Events.AcceptEvent(ctx, e)
		require.NoError(t, err)
		return acc.EventID
	}
	accept("k1")
	accept("k2")
	batch, err := st.Events.ClaimOutbox(ctx, 10)
	require.NoError(t, err)
	require.NoError(t, batch.Finish(ctx, []int64{batch.Orders[0].ID, batch.Orders[1].ID}, nil))

	// A day later nothing has expired yet.
	st.SetClock(func() time.Time { return t0.Add(24 * time.Hour) })
	c, ran, err := st.Housekeep(ctx, 48*time.Hour)
	require.NoError(t, err)
	require.True(t, ran)
	assert.Equal(t, store.Cleanup{}, c)

	// Three days later: keys (48 h) and finished outbox rows are gone.
	// Events stay: they go with their month (store/partitiondb).
	st.SetClock(func() time.Time { return t0.Add(72 * time.Hour) })
	var counters int64 // the accepted events' counts of the day, one row per shard they fell on
	require.NoError(t, st.DB().Get(&counters, `SELECT count(*) FROM account_daily_events`))
	require.Positive(t, counters)
	c, _, err = st.Housekeep(ctx, 48*time.Hour)
	require.NoError(t, err)
	assert.Equal(t, store.Cleanup{IdempotencyKeys: 2, OutboxRows: 2, SendCounters: counters}, c)
	var events int
	require.NoError(t, st.DB().Get(&events, `SELECT count(*) FROM events`))
	assert.Equal(t, 2, events)
}

func TestHousekeepingRunsOnOneReplicaAtATime(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "PT10S")
	ctx := context.Background()
	tx, err := st.DB().Beginx()
	require.NoError(t, err)
	defer tx.Rollback()
	var got bool
	require.NoError(t, tx.Get(&got, `SELECT pg_try_advisory_xact_lock(x'746f756369'::bigint)`))
	require.True(t, got)
	_, ran, err := st.Housekeep(ctx, time.Hour)
	require.NoError(t, err)
	assert.False(t, ran, "another replica holds the round")
}
