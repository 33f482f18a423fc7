package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
)

// The daily quota of accepted events: counts are granted while there is
// room, partly when a batch does not fit, never beyond the quota however
// many take at once; given back counts make room again; a new UTC day
// starts at zero; an account's own quota wins over the default.
func TestEventQuota(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t), "P7D")
	st.Quotas = store.Quotas{DailyEvents: 10}
	clock := &clockAt{t: time.Date(2026, 6, 1, 23, 0, 0, 0, time.UTC)}
	st.SetClock(clock.now)
	refused := &kinds{}
	st.OnQuotaExceeded = refused.add
	ctx := context.Background()
	acc, _, err := st.CreateAccount(ctx, "Acme")
	require.NoError(t, err)
	other, _, err := st.CreateAccount(ctx, "Other")
	require.NoError(t, err)
	take := func(account string, n int) int {
		t.Helper()
		granted, limit, err := st.TakeEventQuota(ctx, account, n)
		require.NoError(t, err)
		assert.Equal(t, 10, limit)
		return granted
	}

	assert.Equal(t, 3, take(acc.ID, 3))
	assert.Equal(t, 5, take(acc.ID, 5))
	assert.Equal(t, 2, take(acc.ID, 500), "a batch gets the room that is left")
	assert.Equal(t, 0, take(acc.ID, 1))
	assert.Equal(t, 10, take(other.ID, 10), "another account counts its own")
	require.NoError(t, st.ReturnEventQuota(ctx, acc.ID, 4))
	assert.Equal(t, 4, take(acc.ID, 6), "given back counts make room")
	assert.Equal(t, map[string]int{store.QuotaEvents: 3}, refused.get())

	l, err := st.AccountLimits(ctx, acc.ID)
	require.NoError(t, err)
	assert.Equal(t, store.Limit{Limit: 10, Used: 10}, l.DailyEvents)

	clock.advance(time.Hour) // midnight UTC
	assert.Equal(t, 10, take(acc.ID, 20), "a new day")

	// Concurrent takes never overshoot.
	clock.advance(24 * time.Hour)
	var wg sync.WaitGroup
	got := make([]int, 16)
	for i := range got {
		wg.Go(func() {
			var err error
			got[i], _, err = st.TakeEventQuota(ctx, acc.ID, 3)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	total := 0
	for _, g := range got {
		total += g
	}
	assert.Equal(t, 10, total, "%v", got)

	// The account's own quota, then none at all.
	hundred, none := 100, 0
	_, err = st.SetAccountQuotas(ctx, acc.ID, store.QuotaUpdate{DailyEvents: &hundred})
	require.NoError(t, err)
	granted, limit, err := st.TakeEventQuota(ctx, acc.ID, 50)
	require.NoError(t, err)
	assert.Equal(t, []int{50, 100}, []int{granted, limit})
	_, err = st.SetAccountQuotas(ctx, acc.ID, store.QuotaUpdate{DailyEvents: &none})
	require.NoError(t, err)
	granted, limit, err = st.TakeEventQuota(ctx, acc.ID, 5000)
	require.NoError(t, err)
	assert.Equal(t, []int{5000, 0}, []int{granted, limit}, "0: no limit, still counted")
	l, err = st.AccountLimits(ctx, acc.ID)
	require.NoError(t, err)
	assert.Equal(t, store.Limit{Limit: 0, Used: 5060}, l.DailyEvents)

	_, _, err = st.TakeEventQuota(ctx, "acc-00000000-0000-4000-8000-000000000000", 1)
	assert.ErrorIs(t, err, store.ErrNotFound)
}

// Webhook endpoints are a resource quota like channels: concurrent
// creations cannot overshoot it, and GET /account's limits count them.
func TestWebhookEndpointQuota(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t), "P7D")
	st.Quotas = store.Quotas{WebhookEndpoints: 3, Channels: 5, EventTypes: 6, DailySends: 7, RecipientDailyCap: 2}
	ctx := context.Background()
	acc, _, err := st.CreateAccount(ctx, "Acme")
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = st.CreateWebhookEndpoint(ctx, store.WebhookEndpoint{ID: store.NewID("whk"), AccountID: acc.ID,
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
		var qe *store.QuotaError
		require.ErrorAs(t, err, &qe)
		assert.Equal(t, store.QuotaError{Kind: store.QuotaWebhooks, Limit: 3}, *qe)
	}
	assert.Equal(t, 3, created)

	l, err := st.AccountLimits(ctx, acc.ID)
	require.NoError(t, err)
	assert.Equal(t, store.Limits{DailySends: store.Limit{Limit: 7}, RecipientDailyCap: 2, Channels: store.Limit{Limit: 5, Used: 1},
		EventTypes: store.Limit{Limit: 6}, WebhookEndpoints: store.Limit{Limit: 3, Used: 3}}, l)
}
