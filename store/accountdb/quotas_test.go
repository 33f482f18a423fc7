package accountdb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtally"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

func TestResourceQuotas(t *testing.T) {
	t.Parallel()
	st := accountdb.New(pg.NewDB(testdb.New(t)), "P7D")
	st.Quotas = accountdb.Quotas{Channels: 3, EventTypes: 2}
	refused := &testtally.Tally{}
	st.OnQuotaExceeded = refused.Add
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
	assert.Equal(t, map[string]int{accountdb.QuotaChannels: 4, accountdb.QuotaEventTypes: 1}, refused.Counts())

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
