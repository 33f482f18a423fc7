package eventdb

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/store/pg"
)

// keyed is the fixture's event with an idempotency key and the hash of
// its payload.
func (f batchFixture) keyed(email, key string) NewEvent {
	e := f.call(context.Background(), email).event
	e.IdempotencyKey = key
	sum := sha256.Sum256(e.Payload)
	e.RequestHash = sum[:]
	return e
}

// One batch holding every kind of event: each gets its own outcome, the
// good ones are stored as the single statement stores them, with their
// keys, and nothing is stored for the others.
func TestAcceptEventsAnswersEachEvent(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t)
	ctx := context.Background()
	earlier, err := f.st.AcceptEvent(ctx, f.keyed("old@example.com", "k-old"))
	require.NoError(t, err)
	_, err = f.st.AcceptEvent(ctx, f.keyed("taken@example.com", "k-taken"))
	require.NoError(t, err)

	plain := f.call(ctx, "a@example.com").event
	full := f.call(ctx, "b@example.com").event
	full.CustomerReference = "cust-7"
	delivery := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	full.EstimatedDeliveryDate = &delivery
	unknownType := f.call(ctx, "c@example.com").event
	unknownType.Type = "Checkout"
	foreign := f.call(ctx, "d@example.com").event
	foreign.ChannelID = f.foreignChannel
	fresh := f.keyed("e@example.com", "k-new")
	repeat := f.keyed("f@example.com", "k-new")
	replay := f.keyed("old@example.com", "k-old")
	mismatch := f.keyed("other@example.com", "k-taken")

	out, err := f.st.AcceptEvents(ctx, []NewEvent{plain, unknownType, full, foreign, fresh, repeat, replay, mismatch})
	require.NoError(t, err)
	require.Len(t, out, 8)
	for _, i := range []int{0, 2, 4} {
		require.NoError(t, out[i].Err, i)
		assert.True(t, pg.ValidID("evt", out[i].EventID), i)
		assert.False(t, out[i].Replayed, i)
	}
	assert.ErrorIs(t, out[1].Err, ErrUnknownEventType)
	assert.ErrorIs(t, out[3].Err, ErrUnknownChannel)
	assert.ErrorIs(t, out[5].Err, ErrDuplicateIdempotencyKey)
	assert.NoError(t, out[6].Err)
	assert.Equal(t, Accepted{EventID: earlier.EventID, Replayed: true}, out[6].Accepted)
	assert.ErrorIs(t, out[7].Err, ErrIdempotencyMismatch)
	for _, i := range []int{1, 3, 5, 7} {
		assert.Empty(t, out[i].EventID, i)
	}

	// The same event through the single statement, for comparison.
	single, err := f.st.AcceptEvent(ctx, full)
	require.NoError(t, err)
	want, got := f.stored(t, single.EventID), f.stored(t, out[2].EventID)
	want.Received = got.Received
	assert.Equal(t, want, got)
	assert.Equal(t, "cust-7", *got.CustomerRef)
	assert.Equal(t, 1, got.Outbox)

	// The batch's key is taken like a header's: a single POST with it is a replay.
	again, err := f.st.AcceptEvent(ctx, fresh)
	require.NoError(t, err)
	assert.Equal(t, Accepted{EventID: out[4].EventID, Replayed: true}, again)

	var n int
	require.NoError(t, f.st.db.Get(&n, `SELECT count(*) FROM events`))
	assert.Equal(t, 2+3+1, n, "the two earlier, the batch's three, the single one")
	require.NoError(t, f.st.db.Get(&n, `SELECT count(*) FROM outbox`))
	assert.Equal(t, 6, n)
}

// An event PostgreSQL refuses (jsonb has no NUL character) fails the
// whole statement: nothing of the batch is stored, keys included.
func TestAcceptEventsIsAllOrNothing(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t)
	ctx := context.Background()
	poison := f.call(ctx, "c@example.com").event
	poison.Payload = json.RawMessage(`{"x":"\u0000"}`)

	_, err := f.st.AcceptEvents(ctx, []NewEvent{f.keyed("a@example.com", "k-1"), poison})
	require.Error(t, err)
	var n int
	require.NoError(t, f.st.db.Get(&n, `SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM outbox) + (SELECT count(*) FROM idempotency_keys)`))
	assert.Zero(t, n)

	_, err = f.st.AcceptEvents(ctx, make([]NewEvent, MaxAcceptEvents+1))
	require.ErrorContains(t, err, "at most")
}

// A single event accepted after a large batch is claimed before the
// batch's orders; the batch's orders keep their arrival order.
func TestSingleAcceptsOvertakeABatchBacklog(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t)
	ctx := context.Background()
	batch := make([]NewEvent, 300)
	for i := range batch {
		batch[i] = f.call(ctx, fmt.Sprintf("b%d@example.com", i)).event
	}
	out, err := f.st.AcceptEvents(ctx, batch)
	require.NoError(t, err)
	lone, err := f.st.AcceptEvent(ctx, f.call(ctx, "lone@example.com").event)
	require.NoError(t, err)
	keyedLone, err := f.st.AcceptEvent(ctx, f.keyed("lone2@example.com", "k-lone"))
	require.NoError(t, err)

	claim, err := f.st.ClaimOutbox(ctx, 3)
	require.NoError(t, err)
	defer claim.Release()
	require.Len(t, claim.Orders, 3)
	assert.Equal(t, lone.EventID, claim.Orders[0].EventID)
	assert.Equal(t, keyedLone.EventID, claim.Orders[1].EventID)
	assert.Equal(t, out[0].EventID, claim.Orders[2].EventID, "then the backlog, oldest first")
}

// Events hold no keys of their own to their event type and channel
// (schema 0012): their invite setting's keys keep both. Deleting either
// while it has events still fails, and an event names what its setting
// names.
func TestEventsKeepTheirEventTypeAndChannelThroughTheirSetting(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t)
	ctx := context.Background()
	out, err := f.st.AcceptEvents(ctx, []NewEvent{f.call(ctx, "kept@example.com").event})
	require.NoError(t, err)
	require.NoError(t, out[0].Err)
	var mismatched int
	require.NoError(t, f.st.db.GetContext(ctx, &mismatched, `SELECT count(*) FROM events e JOIN invite_settings s ON s.id = e.invite_setting_id
		WHERE e.id = $1 AND (s.event_type_id <> e.event_type_id OR s.channel_id <> e.channel_id)`, out[0].EventID))
	assert.Zero(t, mismatched)
	for del, arg := range map[string]string{
		`DELETE FROM event_types WHERE account_id = $1`: f.account,
		`DELETE FROM channels WHERE id = $1`:            f.channel,
	} {
		_, err := f.st.db.ExecContext(ctx, del, arg)
		var pqErr *pq.Error
		require.ErrorAs(t, err, &pqErr, del)
		assert.EqualValues(t, "23503", pqErr.Code, "%s: %v", del, err) // foreign_key_violation
	}
}
