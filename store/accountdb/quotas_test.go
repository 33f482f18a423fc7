package accountdb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// clockAt is a clock a test moves by hand.
type clockAt struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clockAt) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clockAt) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// kinds records the refusals told to OnQuotaExceeded.
type kinds struct {
	mu sync.Mutex
	m  map[string]int
}

func (k *kinds) add(kind string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]int{}
	}
	k.m[kind]++
}

func (k *kinds) get() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]int{}
	for kk, v := range k.m {
		out[kk] = v
	}
	return out
}

// The daily quota of accepted events: counts are granted while there is
// room, partly when a batch does not fit, never beyond the quota however
// many take at once; given back counts make room again; a new UTC day
// starts at zero; an account's own quota wins over the default.
func TestEventQuota(t *testing.T) {
	t.Parallel()
	st := accountdb.New(pg.NewDB(testdb.New(t)), "P7D")
	st.Quotas = accountdb.Quotas{DailyEvents: 10}
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
	assert.Equal(t, map[string]int{accountdb.QuotaEvents: 3}, refused.get())

	l, err := st.AccountLimits(ctx, acc.ID)
	require.NoError(t, err)
	assert.Equal(t, accountdb.Limit{Limit: 10, Used: 10}, l.DailyEvents)

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
	_, err = st.SetAccountQuotas(ctx, acc.ID, accountdb.QuotaUpdate{DailyEvents: &hundred})
	require.NoError(t, err)
	granted, limit, err := st.TakeEventQuota(ctx, acc.ID, 50)
	require.NoError(t, err)
	assert.Equal(t, []int{50, 100}, []int{granted, limit})
	_, err = st.SetAccountQuotas(ctx, acc.ID, accountdb.QuotaUpdate{DailyEvents: &none})
	require.NoError(t, err)
	granted, limit, err = st.TakeEventQuota(ctx, acc.ID, 5000)
	require.NoError(t, err)
	assert.Equal(t, []int{5000, 0}, []int{granted, limit}, "0: no limit, still counted")
	l, err = st.AccountLimits(ctx, acc.ID)
	require.NoError(t, err)
	assert.Equal(t, accountdb.Limit{Limit: 0, Used: 5060}, l.DailyEvents)

	_, _, err = st.TakeEventQuota(ctx, "acc-00000000-0000-4000-8000-000000000000", 1)
	assert.ErrorIs(t, err, pg.ErrNotFound)
}

func TestResourceQuotas(t *testing.T) {
	t.Parallel()
	st := accountdb.New(pg.NewDB(testdb.New(t)), "P7D")
	st.Quotas = accountdb.Quotas{Channels: 3, EventTypes: 2}
	refused := &kinds{}
	st.OnQuotaExceeded = refused.add
	ctx := context.Background()
	acc, _, err := st.CreateAccount(ctx, "Acme") // with its Default channel
	require.NoError(t, err)

	// Concurrent creations cannot overshoot: the account lock orders them.
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = st.CreateChannel(ctx, acc.ID, fmt.Sprintf("ch-%d", i), "")
		})
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		if err == nil {
			created++
			continue
		}
		assert.ErrorIs(t, err, accountdb.ErrQuotaExceeded)
		var qe *accountdb.QuotaError
		require.ErrorAs(t, err, &qe)
		assert.Equal(t, accountdb.QuotaError{Kind: accountdb.QuotaChannels, Limit: 3}, *qe)
	}
	assert.Equal(t, 2, created, "the Default channel and two more")

	for i := range 2 {
		_, err := st.CreateEventType(ctx, acc.ID, fmt.Sprintf("type-%d", i), true)
		require.NoError(t, err)
	}
	_, err = st.CreateEventType(ctx, acc.ID, "one-too-many", true)
	assert.ErrorIs(t, err, accountdb.ErrQuotaExceeded)
	assert.Equal(t, map[string]int{accountdb.QuotaChannels: 4, accountdb.QuotaEventTypes: 1}, refused.get())

	// Raised for this account only.
	ten := 10
	_, err = st.SetAccountQuotas(ctx, acc.ID, accountdb.QuotaUpdate{EventTypes: &ten})
	require.NoError(t, err)
	_, err = st.CreateEventType(ctx, acc.ID, "one-too-many", true)
	assert.NoError(t, err)
	other, _, err := st.CreateAccount(ctx, "Other")
	require.NoError(t, err)
	for i := range 2 {
		_, err := st.CreateEventType(ctx, other.ID, fmt.Sprintf("type-%d", i), true)
		require.NoError(t, err)
	}
	_, err = st.CreateEventType(ctx, other.ID, "one-too-many", true)
	assert.ErrorIs(t, err, accountdb.ErrQuotaExceeded)
}
