package invitedb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testclock"
	"github.com/touchpoint/touchpoint/internal/testtally"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
)

// quotaStore is inviteStore with default quotas, a fixed clock and a
// record of the refusals reported to OnQuotaExceeded.
func quotaStore(t *testing.T, q accountdb.Quotas) (*store.Store, func(eventfixture.Setting) *eventfixture.Account, *testclock.Clock, *testtally.Tally) {
	t.Helper()
	st, account := inviteStore(t)
	st.Accounts.Quotas = q
	clock := testclock.New(time.Date(2026, 6, 1, 23, 0, 0, 0, time.UTC))
	st.SetClock(clock.Now)
	refused := &testtally.Tally{}
	st.Accounts.OnQuotaExceeded = refused.Add
	return st, account, clock, refused
}

// claimOne claims an invite's send; with sms, as a worker with a provider
// that normalised the fixture's mobile number.
func claimOne(t *testing.T, st *store.Store, id string, sms bool) invitedb.Claim {
	t.Helper()
	opts := invitedb.ClaimOptions{}
	if sms {
		opts = invitedb.ClaimOptions{SMSEnabled: true, Mobile: "+4915112345678"}
	}
	c, err := st.Invites.ClaimSend(context.Background(), invite.KindInvite, id, opts)
	require.NoError(t, err)
	return c
}

func TestDailySendQuota(t *testing.T) {
	t.Parallel()
	st, account, clock, refused := quotaStore(t, accountdb.Quotas{DailySends: 100})
	ctx := context.Background()
	a, other := account(eventfixture.Setting{}), account(eventfixture.Setting{})
	two := 2
	q, err := st.Accounts.SetAccountQuotas(ctx, a.AccountID, accountdb.QuotaUpdate{DailySends: &two})
	require.NoError(t, err)
	assert.Equal(t, accountdb.Quotas{DailySends: 2}, q)

	send := func(acc *eventfixture.Account, email string) invitedb.Claim {
		return claimOne(t, st, acc.Event(t, eventfixture.Event{Email: email, Status: invite.Scheduled}), false)
	}
	first := a.Event(t, eventfixture.Event{Email: "a@example.com", Status: invite.Scheduled})
	c := claimOne(t, st, first, false)
	require.True(t, c.Send)
	// A transient failure puts it back; its next attempt was counted.
	_, err = st.Invites.FinishSend(ctx, invite.KindInvite, first, invite.SendResult{Retry: true, Error: "451 later"})
	require.NoError(t, err)
	require.True(t, send(a, "b@example.com").Send)
	assert.True(t, claimOne(t, st, first, false).Send, "a retried attempt is not counted twice")

	c = send(a, "c@example.com")
	assert.False(t, c.Send)
	assert.Equal(t, invite.Skipped, c.State.Status)
	assert.Equal(t, invite.QuotaExceeded, c.State.Reason)
	assert.Equal(t, "the account's daily send quota of 2 is used up", c.State.LastError)
	assert.Equal(t, 0, c.State.Attempts)
	assert.True(t, send(other, "c@example.com").Send, "another account has its own quota")
	assert.Equal(t, map[string]int{accountdb.QuotaDailySends: 1}, refused.Counts())

	// A new UTC day (an hour later) starts a new count.
	clock.Advance(time.Hour)
	assert.True(t, send(a, "c@example.com").Send)

	// Counters of past days go in housekeeping.
	clock.Advance(48 * time.Hour)
	c2, _, err := st.Housekeep(ctx, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, int64(3), c2.SendCounters, "the counters of accounts a and other on the first day, of a on the second")

	// 0 lifts the limit; a negative update returns to the default.
	zero, back := 0, -1
	q, err = st.Accounts.SetAccountQuotas(ctx, a.AccountID, accountdb.QuotaUpdate{DailySends: &zero})
	require.NoError(t, err)
	assert.Zero(t, q.DailySends)
	q, err = st.Accounts.SetAccountQuotas(ctx, a.AccountID, accountdb.QuotaUpdate{DailySends: &back})
	require.NoError(t, err)
	assert.Equal(t, 100, q.DailySends)
	_, err = st.Accounts.SetAccountQuotas(ctx, store.NewID("acc"), accountdb.QuotaUpdate{DailySends: &two})
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = st.Accounts.AccountQuotas(ctx, store.NewID("acc"))
	assert.ErrorIs(t, err, store.ErrNotFound)
}

func TestRecipientDailyCap(t *testing.T) {
	t.Parallel()
	st, account, clock, refused := quotaStore(t, accountdb.Quotas{RecipientDailyCap: 3, DailySends: 5})
	// Without minDaysBetweenInvites only the cap stops a list-bomb of one
	// address.
	a := account(eventfixture.Setting{})
	sendTo := func(email string) invitedb.Claim {
		return claimOne(t, st, a.Event(t, eventfixture.Event{Email: email, Status: invite.Scheduled}), false)
	}
	for _, email := range []string{"jane@example.com", "Jane@Example.com", "JANE@EXAMPLE.COM"} {
		require.True(t, sendTo(email).Send, email)
	}
	c := sendTo("jane@example.COM")
	assert.False(t, c.Send)
	assert.Equal(t, invite.QuotaExceeded, c.State.Reason)
	assert.Equal(t, "the account may send at most 3 invites a day to one address", c.State.LastError)
	// The cap is per address: a text to her mobile, and mail to another
	// address, go out — and the capped invite did not use up the daily
	// send quota (5): these are its fourth and fifth sends.
	a.Set(t, "medium", invite.SMS)
	require.True(t, claimOne(t, st, a.Event(t, eventfixture.Event{Email: "jane@example.com", Mobile: "+4915112345678", Status: invite.Scheduled}), true).Send)
	a.Set(t, "medium", invite.Email)
	require.True(t, sendTo("john@example.com").Send)
	c = sendTo("mary@example.com")
	assert.Equal(t, invite.QuotaExceeded, c.State.Reason)
	assert.Equal(t, "the account's daily send quota of 5 is used up", c.State.LastError)
	assert.Equal(t, map[string]int{accountdb.QuotaRecipient: 1, accountdb.QuotaDailySends: 1}, refused.Counts())

	// Refused by the daily quota, mary's invite was not counted against
	// her address either: on a new day she gets all three.
	clock.Advance(2 * time.Hour)
	for range 3 {
		require.True(t, sendTo("mary@example.com").Send)
	}
	assert.Equal(t, invite.QuotaExceeded, sendTo("mary@example.com").State.Reason)
}

func TestSendQuotasHoldUnderConcurrentClaims(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		quotas accountdb.Quotas
		email  func(i int) string
		want   int
	}{
		"daily quota, many addresses": {accountdb.Quotas{DailySends: 4}, func(i int) string { return fmt.Sprintf("u%d@example.com", i) }, 4},
		"cap of one address":          {accountdb.Quotas{RecipientDailyCap: 3}, func(int) string { return "jane@example.com" }, 3},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, account, _, _ := quotaStore(t, tc.quotas)
			a := account(eventfixture.Setting{})
			var ids []string
			for i := range 12 {
				ids = append(ids, a.Event(t, eventfixture.Event{Email: tc.email(i), Status: invite.Scheduled}))
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			sends, capped := 0, 0
			for _, id := range ids {
				wg.Go(func() {
					c, err := st.Invites.ClaimSend(context.Background(), invite.KindInvite, id, invitedb.ClaimOptions{})
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if c.Send {
						sends++
					} else if c.State.Reason == invite.QuotaExceeded {
						capped++
					}
				})
			}
			wg.Wait()
			assert.Equal(t, tc.want, sends)
			assert.Equal(t, len(ids)-tc.want, capped)
		})
	}
}
