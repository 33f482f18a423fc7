package suppressiondb_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/webhookfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
)

// inviteStore returns a store on a fresh database and a maker of fixture
// accounts in it.
func inviteStore(t *testing.T) (*store.Store, func(eventfixture.Setting) *eventfixture.Account) {
	t.Helper()
	st, _, account := webhookfixture.Store(t)
	return st, account
}

// claimSend claims the send of a scheduled invite, which must go out.
func claimSend(t *testing.T, st *store.Store, id string) invitedb.Claim {
	t.Helper()
	c, err := st.Invites.ClaimSend(context.Background(), invite.KindInvite, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send)
	return c
}

func TestSuppressionList(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a, b := account(eventfixture.Setting{}), account(eventfixture.Setting{})

	x, created, err := st.Suppressions.AddSuppression(ctx, a.AccountID, "ann@example.com", invite.Email, invite.Manual, "")
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, suppressiondb.Suppression{AccountID: a.AccountID, Address: "ann@example.com", Medium: invite.Email,
		Reason: invite.Manual, By: "unknown", CreatedAt: x.CreatedAt}, x)
	again, created, err := st.Suppressions.AddSuppression(ctx, a.AccountID, "ann@example.com", invite.Email, invite.Bounced, "")
	require.NoError(t, err)
	assert.False(t, created, "an existing entry is left as it is")
	assert.Equal(t, x, again)

	_, _, err = st.Suppressions.AddSuppression(ctx, a.AccountID, "+4915112345678", invite.SMS, invite.Unsubscribed, "")
	require.NoError(t, err)
	_, _, err = st.Suppressions.AddSuppression(ctx, b.AccountID, "bob@example.com", invite.Email, invite.Manual, "")
	require.NoError(t, err)

	all, next, err := st.Suppressions.ListSuppressions(ctx, a.AccountID, suppressiondb.SuppressionFilter{}, store.Page{Limit: 1})
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.NotNil(t, next)
	assert.Equal(t, "+4915112345678", all[0].Address, "newest first")
	rest, next, err := st.Suppressions.ListSuppressions(ctx, a.AccountID, suppressiondb.SuppressionFilter{}, store.Page{Limit: 1, After: next})
	require.NoError(t, err)
	assert.Nil(t, next)
	require.Len(t, rest, 1)
	assert.Equal(t, "ann@example.com", rest[0].Address)

	byReason, _, err := st.Suppressions.ListSuppressions(ctx, a.AccountID, suppressiondb.SuppressionFilter{Reason: invite.Unsubscribed}, store.Page{})
	require.NoError(t, err)
	require.Len(t, byReason, 1)
	assert.Equal(t, invite.SMS, byReason[0].Medium)
	byAddress, _, err := st.Suppressions.ListSuppressions(ctx, a.AccountID, suppressiondb.SuppressionFilter{Address: "ANN@example.com"}, store.Page{})
	require.NoError(t, err)
	assert.Len(t, byAddress, 1, "emails match case-insensitively")

	// Tenant isolation: b's entry is invisible to a, and a cannot lift it.
	none, _, err := st.Suppressions.ListSuppressions(ctx, a.AccountID, suppressiondb.SuppressionFilter{Address: "bob@example.com"}, store.Page{})
	require.NoError(t, err)
	assert.Empty(t, none)
	assert.ErrorIs(t, st.Suppressions.LiftSuppression(ctx, a.AccountID, "bob@example.com", suppressiondb.ActorOperator, true), store.ErrNotFound)

	require.NoError(t, st.Suppressions.LiftSuppression(ctx, a.AccountID, "ann@example.com", suppressiondb.ActorOperator, true))
	assert.ErrorIs(t, st.Suppressions.LiftSuppression(ctx, a.AccountID, "ann@example.com", suppressiondb.ActorOperator, true), store.ErrNotFound)
	_, err = st.Suppressions.Suppression(ctx, b.AccountID, "bob@example.com")
	assert.NoError(t, err)
}

// Every addition and lift is kept with who made it, newest first; an
// entry the customer made is lifted only with their consent, and a refused
// lift leaves both the entry and the history as they were.
func TestSuppressionHistory(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a, b := account(eventfixture.Setting{}), account(eventfixture.Setting{})
	const addr = "ann@example.com"

	_, _, err := st.Suppressions.SuppressionHistory(ctx, a.AccountID, addr, store.Page{})
	assert.ErrorIs(t, err, store.ErrNotFound, "never listed")

	x, _, err := st.Suppressions.AddSuppression(ctx, a.AccountID, addr, invite.Email, invite.Unsubscribed, "")
	require.NoError(t, err)
	assert.Equal(t, suppressiondb.ActorCustomer, x.By)
	assert.ErrorIs(t, st.Suppressions.LiftSuppression(ctx, a.AccountID, addr, "cli-shop", false), suppressiondb.ErrConsentNeeded)
	_, err = st.Suppressions.Suppression(ctx, a.AccountID, addr)
	require.NoError(t, err, "a refused lift leaves the entry")
	require.NoError(t, st.Suppressions.LiftSuppression(ctx, a.AccountID, addr, "cli-shop", true))

	y, _, err := st.Suppressions.AddSuppression(ctx, a.AccountID, addr, invite.Email, invite.Bounced, "")
	require.NoError(t, err)
	assert.Equal(t, suppressiondb.ActorProvider, y.By)
	require.NoError(t, st.Suppressions.LiftSuppression(ctx, a.AccountID, addr, suppressiondb.ActorOperator, false), "a bounce needs no consent")
	z, _, err := st.Suppressions.AddSuppressionBy(ctx, a.AccountID, addr, invite.Email, invite.Manual, "cli-other")
	require.NoError(t, err)
	assert.Equal(t, "cli-other", z.By)
	_, _, err = st.Suppressions.AddSuppression(ctx, a.AccountID, addr, invite.Email, invite.Complained, "")
	require.NoError(t, err)

	type line struct{ action, reason, by string }
	var got []line
	var after *store.Cursor
	for {
		cs, next, err := st.Suppressions.SuppressionHistory(ctx, a.AccountID, "ann@example.com", store.Page{Limit: 2, After: after})
		require.NoError(t, err)
		for _, c := range cs {
			got = append(got, line{c.Action, string(c.Reason), c.By})
		}
		if next == nil {
			break
		}
		after = next
	}
	assert.Equal(t, []line{
		{"added", "manual", "cli-other"}, // the complaint found it listed: nothing changed
		{"lifted", "bounced", suppressiondb.ActorOperator},
		{"added", "bounced", suppressiondb.ActorProvider},
		{"lifted", "unsubscribed", "cli-shop"},
		{"added", "unsubscribed", suppressiondb.ActorCustomer},
	}, got)

	_, _, err = st.Suppressions.SuppressionHistory(ctx, b.AccountID, addr, store.Page{})
	assert.ErrorIs(t, err, store.ErrNotFound, "another account sees none of it")
}

// TestSuppressionOutlivesItsEvent: a suppression is not customer data tied
// to an event: deleting the event keeps it, and retrying the
// invite whose refusal made it does not lift it.
func TestSuppressionOutlivesItsEvent(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
	c := claimSend(t, st, id)
	_, err := st.Invites.FinishSend(ctx, invite.KindInvite, id, invite.SendResult{Reason: invite.Rejected, Error: "550 5.1.1 unknown user",
		Suppress: invite.Bounced, Address: c.Address})
	require.NoError(t, err)
	x, err := st.Suppressions.Suppression(ctx, a.AccountID, "jane.doe@example.com")
	require.NoError(t, err)
	assert.Equal(t, invite.Bounced, x.Reason)
	require.NotNil(t, x.EventID)
	assert.Equal(t, id, *x.EventID)

	_, err = st.Invites.RetryInvite(ctx, a.AccountID, id)
	require.NoError(t, err)
	_, err = st.Suppressions.Suppression(ctx, a.AccountID, "jane.doe@example.com")
	require.NoError(t, err, "a retry never lifts a suppression")

	_, err = st.DB().ExecContext(ctx, `DELETE FROM events WHERE id = $1`, id)
	require.NoError(t, err)
	_, err = st.Suppressions.Suppression(ctx, a.AccountID, "jane.doe@example.com")
	assert.NoError(t, err, "deleting the event keeps its suppression")
}

// TestSuppressionRacesAClaim: an unsubscribe and a send to the same
// address, started together many times. Whichever wins, no send is
// claimed after the suppression committed: a claim that sends took the
// address lock first, so the suppression's time is never before it. The
// race must have gone both ways — some sends claimed first, some
// suppressed first — or the invariant was checked for one order only:
// the rounds go on (which of the two starts first alternates) until both
// have been seen, and at most maxRounds.
func TestSuppressionRacesAClaim(t *testing.T) {
	t.Parallel()
	const minRounds, maxRounds = 40, 1000
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{MinDays: 0})
	sent, suppressed := 0, 0
	for i := 0; i < minRounds || (i < maxRounds && (sent == 0 || suppressed == 0)); i++ {
		email := "racer" + string(rune('a'+i%26)) + time.Now().Format("150405.000000000") + "@example.com"
		id := a.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: email})
		var (
			wg    sync.WaitGroup
			claim invitedb.Claim
			sup   suppressiondb.Suppression
			cerr  error
			serr  error
		)
		claimIt := func() {
			defer wg.Done()
			claim, cerr = st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{})
		}
		suppressIt := func() {
			defer wg.Done()
			sup, _, serr = st.Suppressions.AddSuppression(ctx, a.AccountID, email, invite.Email, invite.Unsubscribed, "")
		}
		wg.Add(2)
		if i%2 == 0 {
			go claimIt()
			go suppressIt()
		} else {
			go suppressIt()
			go claimIt()
		}
		wg.Wait()
		require.NoError(t, cerr)
		require.NoError(t, serr)
		if !claim.Send {
			assert.Equal(t, invite.Suppressed, claim.State.Reason)
			suppressed++
			continue
		}
		sent++
		var claimedAt time.Time
		require.NoError(t, st.DB().GetContext(ctx, &claimedAt, `SELECT updated_at FROM events WHERE id = $1`, id))
		assert.False(t, sup.CreatedAt.Before(claimedAt), "a send was claimed after the suppression of its address")
	}
	t.Logf("%d sends claimed first, %d suppressed first", sent, suppressed)
	assert.Positive(t, sent, "no round saw the send claimed first")
	assert.Positive(t, suppressed, "no round saw the suppression first")
}
