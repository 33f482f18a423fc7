package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// After an erasure no copy of the customer's address is left in any text
// column of any table, except the suppression list, which keeps it on
// purpose; their names, postal address, mobile and reference are gone
// from the events; reviews stay; pending invites and reminders are
// cancelled.
func TestEraseCustomerLeavesNoCopy(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := storeset.New(db, "P7D")
	ctx := context.Background()
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	const email = "Ann.Lee+shop@Example.com" // as the client sent it
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := db.Exec(q, args...)
		require.NoError(t, err)
	}
	customer := eventfixture.Event{Email: email, FirstName: "Annabel", LastName: "Leeward", Mobile: "+49 151 2345 6789", CustomerReference: "cust-ann-4471"}

	scheduled := a.Event(t, func() eventfixture.Event { e := customer; e.Status = invite.Scheduled; return e }())
	// The address also sits in the metadata and in a failed attempt's error.
	exec(`UPDATE events SET payload = jsonb_set(jsonb_set(payload, '{metadata}', $2), '{customer,address}', '"7 Hidden Lane, Springfield"')
		WHERE id = $1`,
		scheduled, `{"contact": "write to ann.lee+shop@example.com", "campaign": "winter"}`)

	// Sent once after a refused attempt; the reminder still to come; reviewed.
	sent := a.Event(t, func() eventfixture.Event { e := customer; e.Status = invite.Scheduled; return e }())
	c, err := st.Invites.ClaimSend(ctx, invite.KindInvite, sent, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send)
	_, err = st.Invites.FinishSend(ctx, invite.KindInvite, sent, invite.SendResult{Retry: true, Error: "450 mailbox <ann.lee+shop@example.com> busy"})
	require.NoError(t, err)
	c, err = st.Invites.ClaimSend(ctx, invite.KindInvite, sent, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send)
	_, err = st.Invites.FinishSend(ctx, invite.KindInvite, sent, invite.SendResult{SentAt: time.Now()})
	require.NoError(t, err)
	_, err = st.Invites.MarkScheduled(ctx, invite.KindReminder, sent, time.Now().Add(72*time.Hour))
	require.NoError(t, err)
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: sent, Rating: 4, Comment: "Great. Answer me at ANN.LEE+shop@example.com please", Locale: "en"})
	require.NoError(t, err)
	exec(`INSERT INTO idempotency_keys (account_id, key, request_hash, event_id, created_at, expires_at)
		VALUES ($1, 'ann.lee+shop@example.com/order-1', '\x00', $2, now(), now() + interval '1 day')`, a.AccountID, sent)

	inFlight := a.Event(t, func() eventfixture.Event { e := customer; e.Status = invite.Sending; return e }())
	failed := a.Event(t, func() eventfixture.Event { e := customer; e.Status = invite.Failed; return e }())
	exec(`UPDATE events SET invite_reason = 'rejected', last_error = '550 <ann.lee+shop@example.com> unknown' WHERE id = $1`, failed)
	_, _, err = st.Suppressions.AddSuppression(ctx, a.AccountID, "ann.lee+shop@example.com", invite.Email, invite.Bounced, failed)
	require.NoError(t, err)
	// The mobile was listed once and lifted: its history has no entry to
	// keep it.
	_, _, err = st.Suppressions.AddSuppressionBy(ctx, a.AccountID, "+4915123456789", invite.SMS, invite.Manual, "cli-shop")
	require.NoError(t, err)
	require.NoError(t, st.Suppressions.LiftSuppression(ctx, a.AccountID, "+4915123456789", "cli-shop", false))

	other := a.Event(t, eventfixture.Event{Email: "bob@example.com", FirstName: "Bob", Status: invite.Scheduled})

	before := testdb.Copies(t, db, "ann.lee+shop@example.com")
	for _, col := range []string{"events.customer_email", "events.payload", "events.last_error", "send_attempts.detail",
		"reviews.comment", "idempotency_keys.key", "suppressions.address", "suppression_history.address"} {
		assert.Contains(t, before, col, "the test puts a copy there")
	}
	assert.Contains(t, testdb.Copies(t, db, "4915123456789"), "suppression_history.address")

	got, err := st.EraseCustomer(ctx, a.AccountID, store.CustomerKey{Email: "ANN.LEE+SHOP@example.com"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{scheduled, sent}, got.Cancelled)
	got.Cancelled = nil
	assert.Equal(t, store.Erasure{Events: 4, InvitesCancelled: 1, RemindersCancelled: 1, InvitesInFlight: 1,
		ReviewsKept: 1, SuppressionsKept: 1}, got)

	assert.Equal(t, map[string]int{"suppressions.address": 1, "suppression_history.address": 1},
		testdb.Copies(t, db, "ann.lee+shop@example.com"), "only the suppression list and its history keep the address")
	for _, s := range []string{"Annabel", "Leeward", "Hidden Lane", "2345 6789", "4915123456789", "cust-ann-4471"} {
		assert.Empty(t, testdb.Copies(t, db, s), "%q is gone", s)
	}
	assert.NotEmpty(t, testdb.Copies(t, db, "bob@example.com"), "another customer is untouched")

	for id, want := range map[string]struct{ invite, reminder string }{
		scheduled: {"cancelled", ""}, sent: {"sent", "cancelled"}, inFlight: {"sending", ""}, failed: {"failed", ""},
	} {
		e, err := st.Invites.Event(ctx, a.AccountID, id)
		require.NoError(t, err)
		assert.True(t, e.ErasedAt.Valid, id)
		assert.Equal(t, want.invite, string(e.InviteStatus), id)
		assert.Equal(t, want.reminder, e.ReminderStatus.String, id)
		var p struct {
			Customer map[string]string
			Metadata map[string]string
		}
		require.NoError(t, json.Unmarshal(e.Payload, &p))
		assert.Empty(t, p.Customer, "nothing of the customer is left, not even the client's reference")
		if id == scheduled {
			assert.Equal(t, map[string]string{"contact": "write to [erased]", "campaign": "winter"}, p.Metadata)
		}
	}
	review, err := st.Reviews.ReviewOfEvent(ctx, sent)
	require.NoError(t, err)
	assert.Equal(t, 4, review.Rating)
	assert.Equal(t, "Great. Answer me at [erased] please", review.Comment)
	attempts, err := st.Invites.EventAttempts(ctx, sent)
	require.NoError(t, err)
	require.Len(t, attempts, 2, "the attempts stay, without their details")
	assert.Equal(t, invite.OutcomeTransient, attempts[0].Outcome)
	assert.Empty(t, attempts[0].Detail)

	// The invite of another customer is not touched; a second erasure finds nothing.
	state, err := st.Invites.LoadInviteState(ctx, other)
	require.NoError(t, err)
	assert.Equal(t, invite.Scheduled, state.Status)
	again, err := st.EraseCustomer(ctx, a.AccountID, store.CustomerKey{Email: email})
	require.NoError(t, err)
	assert.Equal(t, store.Erasure{}, again)
}

// By reference an erasure reaches every event of the client's customer,
// whatever address each carries, and only in the caller's account.
func TestEraseCustomerByReference(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := storeset.New(db, "P7D")
	ctx := context.Background()
	a, b := eventfixture.NewAccount(t, db, eventfixture.Setting{}), eventfixture.NewAccount(t, db, eventfixture.Setting{})
	first := a.Event(t, eventfixture.Event{Email: "old@example.com", CustomerReference: "C-9", Status: invite.Sent})
	second := a.Event(t, eventfixture.Event{Email: "new@example.com", CustomerReference: "C-9", Status: invite.Pending})
	noRef := a.Event(t, eventfixture.Event{Email: "new@example.com"})
	otherAccount := b.Event(t, eventfixture.Event{Email: "new@example.com", CustomerReference: "C-9"})

	got, err := st.EraseCustomer(ctx, a.AccountID, store.CustomerKey{Reference: "C-9"})
	require.NoError(t, err)
	assert.Equal(t, 2, got.Events)
	assert.Equal(t, 1, got.InvitesCancelled)
	assert.Equal(t, []string{second}, got.Cancelled)
	for id, erased := range map[string]bool{first: true, second: true, noRef: false} {
		e, err := st.Invites.Event(ctx, a.AccountID, id)
		require.NoError(t, err)
		assert.Equal(t, erased, e.ErasedAt.Valid, id)
	}
	e, err := st.Invites.Event(ctx, b.AccountID, otherAccount)
	require.NoError(t, err)
	assert.False(t, e.ErasedAt.Valid, "another account's customer with the same reference is another customer")

	again, err := st.EraseCustomer(ctx, a.AccountID, store.CustomerKey{Reference: "C-9"})
	require.NoError(t, err)
	assert.Zero(t, again.Events, "erased events are not erased again")

	for _, k := range []store.CustomerKey{{}, {Email: "x@example.com", Reference: "C-9"}, {Email: "  "}} {
		_, err := st.EraseCustomer(ctx, a.AccountID, k)
		assert.ErrorIs(t, err, store.ErrCustomerKey, "%+v", k)
	}
}

// An erasure's cancels count in the funnel like the API's: the counts
// kept change by change stay equal to a count over the rows.
func TestEraseCustomerCountsItsCancels(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "P7D")
	f := newFunnelTenant(t, st)
	ctx := context.Background()
	now := time.Now()
	pending := f.accept(t, "erase.me@example.com", "de")
	scheduled := f.accept(t, "erase.me@example.com", "")
	_, err := st.Invites.MarkScheduled(ctx, invite.KindInvite, scheduled, now.Add(time.Hour))
	require.NoError(t, err)
	sent := f.accept(t, "erase.me@example.com", "")
	send(t, st, sent, now)
	f.accept(t, "keep.me@example.com", "")

	got, err := st.EraseCustomer(ctx, f.AccountID, store.CustomerKey{Email: "erase.me@example.com"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{pending, scheduled}, got.Cancelled)
	counts := total(t, st, wholeDay(f.AccountID, now, stats.GroupDay))
	assert.Equal(t, rowCounts(t, st, f.AccountID), counts)
	assert.EqualValues(t, 2, counts[stats.Cancelled])
	assert.EqualValues(t, 1, counts[stats.Pending], "the other customer's")
}
