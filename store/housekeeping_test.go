package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
)

func TestHousekeeping(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t), "PT10S")
	tn := newTenant(t, st)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return t0 })

	accept := func(key string) string {
		e := tn.event("a@example.com")
		e.IdempotencyKey, e.RequestHash = key, []byte(key)
		acc, err := st.Events.AcceptEvent(ctx, e)
		require.NoError(t, err)
		return acc.EventID
	}
	old, waiting := accept("k1"), accept("k2")
	_, err := st.DB().Exec(`UPDATE events SET invite_status = 'sent' WHERE id = $1`, old)
	require.NoError(t, err)
	batch, err := st.Events.ClaimOutbox(ctx, 10)
	require.NoError(t, err)
	require.NoError(t, batch.Finish(ctx, []int64{batch.Orders[0].ID, batch.Orders[1].ID}, nil))

	// A day later nothing has expired yet, and events are kept by default.
	st.SetClock(func() time.Time { return t0.Add(24 * time.Hour) })
	c, ran, err := st.Housekeep(ctx, 48*time.Hour, 0)
	require.NoError(t, err)
	require.True(t, ran)
	assert.Equal(t, store.Cleanup{}, c)

	// Three days later: keys (48 h) and finished outbox rows are gone; with
	// a retention of one day the ended event goes, the waiting one stays.
	st.SetClock(func() time.Time { return t0.Add(72 * time.Hour) })
	var counters int64 // the accepted events' counts of the day, one row per shard they fell on
	require.NoError(t, st.DB().Get(&counters, `SELECT count(*) FROM account_daily_events`))
	require.Positive(t, counters)
	c, _, err = st.Housekeep(ctx, 48*time.Hour, 24*time.Hour)
	require.NoError(t, err)
	assert.Equal(t, store.Cleanup{IdempotencyKeys: 2, OutboxRows: 2, Events: 1, SendCounters: counters}, c)
	_, err = st.Event(ctx, tn.accountID, old)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = st.Event(ctx, tn.accountID, waiting)
	assert.NoError(t, err, "an invite still under way is never deleted")

	// Webhook deliveries that ended go after WebhookDeliveryKeep; one
	// still pending stays however old.
	_, err = st.DB().Exec(`INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created_at, updated_at)
		VALUES ('whk-1', $1, 'https://hooks.example.com', '{invite.sent}', '\x00', $2, $2)`, tn.accountID, t0)
	require.NoError(t, err)
	for id, status := range map[string]string{"msg-done": "succeeded", "msg-gaveup": "failed", "msg-waiting": "pending"} {
		_, err = st.DB().Exec(`INSERT INTO webhook_deliveries (id, endpoint_id, account_id, type, payload, status, created_at, next_start_at)
			VALUES ($1, 'whk-1', $2, 'invite.sent', '{}', $3, $4, $4)`, id, tn.accountID, status, t0)
		require.NoError(t, err)
	}
	st.SetClock(func() time.Time { return t0.Add(store.WebhookDeliveryKeep - time.Hour) })
	c, _, err = st.Housekeep(ctx, 48*time.Hour, 0)
	require.NoError(t, err)
	assert.Zero(t, c.WebhookDeliveries, "kept for WebhookDeliveryKeep")
	st.SetClock(func() time.Time { return t0.Add(store.WebhookDeliveryKeep + time.Hour) })
	c, _, err = st.Housekeep(ctx, 48*time.Hour, 0)
	require.NoError(t, err)
	assert.EqualValues(t, 2, c.WebhookDeliveries)
	var left []string
	require.NoError(t, st.DB().Select(&left, `SELECT id FROM webhook_deliveries`))
	assert.Equal(t, []string{"msg-waiting"}, left)
}

func TestHousekeepingRunsOnOneReplicaAtATime(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t), "PT10S")
	ctx := context.Background()
	tx, err := st.DB().Beginx()
	require.NoError(t, err)
	defer tx.Rollback()
	var got bool
	require.NoError(t, tx.Get(&got, `SELECT pg_try_advisory_xact_lock(x'746f756369'::bigint)`))
	require.True(t, got)
	_, ran, err := st.Housekeep(ctx, time.Hour, 0)
	require.NoError(t, err)
	assert.False(t, ran, "another replica holds the round")
}
