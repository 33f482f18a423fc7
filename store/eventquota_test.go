package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testclock"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtally"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// The daily quota of accepted events, enforced where the events are
// stored: single accepts and batches are accepted while there is room, a
// batch that does not fit gets the room that is left (its first events),
// and nothing is accepted beyond the quota however many accept at once.
// Replays and refused events are not counted, and are answered as such at
// the limit too; a new UTC day starts at zero; an account's own quota
// wins over the default, and a changed quota holds from the next accept.
func TestEventQuota(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := store.New(db, "P7D")
	st.Accounts.Quotas = accountdb.Quotas{DailyEvents: 10}
	clock := testclock.New(time.Date(2026, 6, 1, 23, 0, 0, 0, time.UTC))
	st.SetClock(clock.Now)
	refused := &testtally.Tally{}
	st.Accounts.OnQuotaExceeded = refused.Add
	ctx := context.Background()
	acc, other := eventfixture.NewTenant(t, st), eventfixture.NewTenant(t, st)
	var n atomic.Int64
	event := func(tn eventfixture.Tenant) eventdb.NewEvent {
		return tn.Event(fmt.Sprintf("c%d@example.com", n.Add(1)))
	}
	overQuota := func(err error, limit int) bool {
		var q *accountdb.QuotaError
		return errors.As(err, &q) && q.Kind == accountdb.QuotaEvents && q.Limit == limit
	}
	// accept posts n events of tn, as a batch when n > 1, and returns how
	// many were accepted and how many over quota (limit).
	accept := func(tn eventfixture.Tenant, n, limit int) (accepted, over int) {
		t.Helper()
		if n == 1 {
			_, err := st.Events.AcceptEvent(ctx, event(tn))
			if overQuota(err, limit) {
				return 0, 1
			}
			require.NoError(t, err)
			return 1, 0
		}
		events := make([]eventdb.NewEvent, n)
		for i := range events {
			events[i] = event(tn)
		}
		out, err := st.Events.AcceptEvents(ctx, events)
		require.NoError(t, err)
		for i, o := range out {
			switch {
			case o.Err == nil:
				require.Zero(t, over, "event %d accepted after one over quota", i)
				accepted++
			case overQuota(o.Err, limit):
				over++
			default:
				require.NoError(t, o.Err)
			}
		}
		return accepted, over
	}
	used := func(tn eventfixture.Tenant) int {
		t.Helper()
		l, err := st.Accounts.AccountLimits(ctx, tn.AccountID)
		require.NoError(t, err)
		return l.DailyEvents.Used
	}
	stored := func(tn eventfixture.Tenant, day time.Time) int {
		t.Helper()
		var n int
		require.NoError(t, db.Get(&n, `SELECT count(*) FROM events WHERE account_id = $1 AND received_at >= $2 AND received_at < $3`,
			tn.AccountID, day, day.Add(24*time.Hour)))
		return n
	}

	keyed := event(acc)
	keyed.IdempotencyKey, keyed.RequestHash = "order-1", []byte("h1")
	first, err := st.Events.AcceptEvent(ctx, keyed)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 0}, pair(accept(acc, 2, 10)))
	assert.Equal(t, []int{5, 0}, pair(accept(acc, 5, 10)))
	assert.Equal(t, []int{2, 498}, pair(accept(acc, 500, 10)), "a batch gets the room that is left")
	assert.Equal(t, []int{0, 1}, pair(accept(acc, 1, 10)))
	assert.Equal(t, []int{10, 0}, pair(accept(other, 10, 10)), "another account counts its own")
	assert.Equal(t, map[string]int{accountdb.QuotaEvents: 499}, refused.Counts())

	// At the limit a replay is still a replay, a mismatch a mismatch and
	// an unknown type unknown: none of them counts.
	again, err := st.Events.AcceptEvent(ctx, keyed)
	require.NoError(t, err)
	assert.Equal(t, eventdb.Accepted{EventID: first.EventID, Replayed: true}, again)
	mismatch := keyed
	mismatch.RequestHash = []byte("h2")
	_, err = st.Events.AcceptEvent(ctx, mismatch)
	assert.ErrorIs(t, err, eventdb.ErrIdempotencyMismatch)
	unknown := event(acc)
	unknown.Type = "missing"
	_, err = st.Events.AcceptEvent(ctx, unknown)
	assert.ErrorIs(t, err, eventdb.ErrUnknownEventType)
	assert.Equal(t, 10, used(acc))
	assert.Equal(t, 10, stored(acc, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)), "the count is the events stored")

	clock.Advance(time.Hour) // midnight UTC
	assert.Equal(t, []int{10, 10}, pair(accept(acc, 20, 10)), "a new day")

	// Concurrent accepts, single and in batches, never overshoot, and the
	// count is the events stored.
	clock.Advance(24 * time.Hour)
	day := time.Date(2026, 6, 3, 0, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := range 48 {
		wg.Go(func() {
			a, _ := accept(acc, 1+i%2*2, 10)
			mu.Lock()
			total += a
			mu.Unlock()
		})
	}
	wg.Wait()
	assert.Equal(t, 10, total)
	assert.Equal(t, 10, stored(acc, day))
	assert.Equal(t, 10, used(acc))

	// The account's own quota, raised: the accepts go on to it.
	hundred, fifty, none := 100, 50, 0
	_, err = st.Accounts.SetAccountQuotas(ctx, acc.AccountID, accountdb.QuotaUpdate{DailyEvents: &hundred})
	require.NoError(t, err)
	assert.Equal(t, []int{60, 0}, pair(accept(acc, 60, 100)))
	// Lowered below the count: nothing more, and the count stays.
	_, err = st.Accounts.SetAccountQuotas(ctx, acc.AccountID, accountdb.QuotaUpdate{DailyEvents: &fifty})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, pair(accept(acc, 1, 50)))
	assert.Equal(t, 70, used(acc))
	// None at all: still counted.
	_, err = st.Accounts.SetAccountQuotas(ctx, acc.AccountID, accountdb.QuotaUpdate{DailyEvents: &none})
	require.NoError(t, err)
	assert.Equal(t, []int{1000, 0}, pair(accept(acc, 1000, 0)))
	l, err := st.Accounts.AccountLimits(ctx, acc.AccountID)
	require.NoError(t, err)
	assert.Equal(t, accountdb.Limit{Limit: 0, Used: 1070}, l.DailyEvents)
	assert.Equal(t, 1070, stored(acc, day))
	// And back to a quota: 1070 is over it.
	_, err = st.Accounts.SetAccountQuotas(ctx, acc.AccountID, accountdb.QuotaUpdate{DailyEvents: &hundred})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1}, pair(accept(acc, 1, 100)))
}

func pair(a, b int) []int { return []int{a, b} }

// Webhook endpoints are a resource quota like channels: concurrent
// creations cannot overshoot it, and GET /account's limits count them.
func TestWebhookEndpointQuota(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "P7D")
	st.Accounts.Quotas = accountdb.Quotas{WebhookEndpoints: 3, Channels: 5, EventTypes: 6, DailySends: 7, RecipientDailyCap: 2}
	ctx := context.Background()
	acc, _, err := st.Accounts.CreateAccount(ctx, "Acme")
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = st.Webhooks.CreateWebhookEndpoint(ctx, webhookdb.WebhookEndpoint{ID: store.NewID("whk"), AccountID: acc.ID,
				URL: fmt.Sprintf("https://hooks.example.com/%d", i), Events: []string{"invite.sent"}, Secret: []byte("sealed")})
		})
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		if err == nil {
			created++
			continue
		}
		var qe *accountdb.QuotaError
		require.ErrorAs(t, err, &qe)
		assert.Equal(t, accountdb.QuotaError{Kind: accountdb.QuotaWebhooks, Limit: 3}, *qe)
	}
	assert.Equal(t, 3, created)

	l, err := st.Accounts.AccountLimits(ctx, acc.ID)
	require.NoError(t, err)
	assert.Equal(t, accountdb.Limits{DailySends: accountdb.Limit{Limit: 7}, RecipientDailyCap: 2, Channels: accountdb.Limit{Limit: 5, Used: 1},
		EventTypes: accountdb.Limit{Limit: 6}, WebhookEndpoints: accountdb.Limit{Limit: 3, Used: 3}}, l)
}
