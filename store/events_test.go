package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/storeset"
)

func TestAcceptEventStoresEventAndStartOrder(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "PT10S")
	tn := eventfixture.NewTenant(t, st)
	ctx := context.Background()

	acc, err := st.Events.AcceptEvent(ctx, tn.Event("Ann@Example.com"))
	require.NoError(t, err)
	assert.False(t, acc.Replayed)
	assert.True(t, store.ValidID("evt", acc.EventID))

	e, err := st.Invites.Event(ctx, tn.AccountID, acc.EventID)
	require.NoError(t, err)
	assert.Equal(t, invite.Pending, e.InviteStatus)
	assert.Equal(t, "checkout", e.Type)
	assert.Equal(t, "email", e.InviteMedium.String, "the medium is copied from the setting at acceptance")
	assert.JSONEq(t, `{"customer":{"email":"Ann@Example.com"}}`, string(e.Payload))

	var delay string
	require.NoError(t, st.DB().Get(&delay, `SELECT delay FROM events WHERE id = $1`, acc.EventID))
	assert.Equal(t, "PT10S", delay, "the schedule is copied into the event")

	batch, err := st.Events.ClaimOutbox(ctx, 10)
	require.NoError(t, err)
	require.Len(t, batch.Orders, 1)
	assert.Equal(t, acc.EventID, batch.Orders[0].EventID)
	assert.Equal(t, invite.RunStart, batch.Orders[0].Kind)
	require.NoError(t, batch.Finish(ctx, []int64{batch.Orders[0].ID}, nil))

	pending, _, err := st.Events.OutboxBacklog(ctx)
	require.NoError(t, err)
	assert.Zero(t, pending)
}

func TestAcceptEventRejectsUnknownTypeAndChannel(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "PT10S")
	tn := eventfixture.NewTenant(t, st)
	other := eventfixture.NewTenant(t, st)
	ctx := context.Background()

	e := tn.Event("a@example.com")
	e.Type = "Checkout" // names match exactly
	_, err := st.Events.AcceptEvent(ctx, e)
	assert.ErrorIs(t, err, eventdb.ErrUnknownEventType)

	e = tn.Event("a@example.com")
	e.ChannelID = other.ChannelID // another account's channel
	_, err = st.Events.AcceptEvent(ctx, e)
	assert.ErrorIs(t, err, eventdb.ErrUnknownChannel)

	var n int
	require.NoError(t, st.DB().Get(&n, `SELECT count(*) FROM events`))
	assert.Zero(t, n, "nothing half-written")
	require.NoError(t, st.DB().Get(&n, `SELECT count(*) FROM outbox`))
	assert.Zero(t, n)
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "PT10S")
	tn := eventfixture.NewTenant(t, st)
	other := eventfixture.NewTenant(t, st)
	ctx := context.Background()

	e := tn.Event("a@example.com")
	e.IdempotencyKey, e.RequestHash = "key-1", []byte("hash-1")
	first, err := st.Events.AcceptEvent(ctx, e)
	require.NoError(t, err)

	again, err := st.Events.AcceptEvent(ctx, e)
	require.NoError(t, err)
	assert.Equal(t, eventdb.Accepted{EventID: first.EventID, Replayed: true}, again)

	e.RequestHash = []byte("hash-2")
	_, err = st.Events.AcceptEvent(ctx, e)
	assert.ErrorIs(t, err, eventdb.ErrIdempotencyMismatch)

	// Keys are per account.
	o := other.Event("a@example.com")
	o.IdempotencyKey, o.RequestHash = "key-1", []byte("hash-1")
	theirs, err := st.Events.AcceptEvent(ctx, o)
	require.NoError(t, err)
	assert.False(t, theirs.Replayed)

	// An expired key is taken afresh.
	_, err = st.DB().Exec(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE account_id = $1`, tn.AccountID)
	require.NoError(t, err)
	e.RequestHash = []byte("hash-3")
	fresh, err := st.Events.AcceptEvent(ctx, e)
	require.NoError(t, err)
	assert.False(t, fresh.Replayed)
	assert.NotEqual(t, first.EventID, fresh.EventID)
}

func TestConcurrentRepeatsOfOneKeyCreateOneEvent(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "PT10S")
	tn := eventfixture.NewTenant(t, st)
	ctx := context.Background()

	e := tn.Event("a@example.com")
	e.IdempotencyKey, e.RequestHash = "burst", []byte("same")
	const n = 16
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			acc, err := st.Events.AcceptEvent(ctx, e)
			assert.NoError(t, err)
			ids[i] = acc.EventID
		})
	}
	wg.Wait()
	for _, id := range ids {
		assert.Equal(t, ids[0], id)
	}
	var count int
	require.NoError(t, st.DB().Get(&count, `SELECT count(*) FROM events`))
	assert.Equal(t, 1, count)
	require.NoError(t, st.DB().Get(&count, `SELECT count(*) FROM outbox`))
	assert.Equal(t, 1, count)
}

func TestOutboxClaimsSkipLockedRowsAndReleases(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "PT10S")
	tn := eventfixture.NewTenant(t, st)
	ctx := context.Background()
	for range 3 {
		_, err := st.Events.AcceptEvent(ctx, tn.Event("a@example.com"))
		require.NoError(t, err)
	}

	first, err := st.Events.ClaimOutbox(ctx, 2)
	require.NoError(t, err)
	require.Len(t, first.Orders, 2)
	second, err := st.Events.ClaimOutbox(ctx, 10)
	require.NoError(t, err)
	require.Len(t, second.Orders, 1, "rows another starter holds are skipped")
	assert.NotContains(t, []int64{first.Orders[0].ID, first.Orders[1].ID}, second.Orders[0].ID)

	require.NoError(t, first.Release())
	require.NoError(t, second.Finish(ctx, nil, []eventdb.Retry{{ID: second.Orders[0].ID, After: time.Hour, Error: "temporal down"}}))

	again, err := st.Events.ClaimOutbox(ctx, 10)
	require.NoError(t, err)
	assert.Len(t, again.Orders, 2, "released rows come back; the rescheduled one waits")
	require.NoError(t, again.Release())

	pending, oldest, err := st.Events.OutboxBacklog(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, pending)
	assert.GreaterOrEqual(t, oldest, time.Duration(0))
}

func TestCountInvitesOfType(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "PT10S")
	tn := eventfixture.NewTenant(t, st)
	ctx := context.Background()
	out, err := st.Events.AcceptEvents(ctx, []eventdb.NewEvent{tn.Event("a@example.com"), tn.Event("b@example.com")})
	require.NoError(t, err)
	_, err = st.Invites.CancelInvite(ctx, tn.AccountID, out[1].EventID)
	require.NoError(t, err)
	var etID string
	require.NoError(t, st.DB().Get(&etID, `SELECT id FROM event_types WHERE name = 'checkout'`))
	c, err := st.Events.CountInvitesOfType(ctx, etID)
	require.NoError(t, err)
	assert.Equal(t, eventdb.InviteCounts{Waiting: 1, Ended: 1}, c)
}
