package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
)

// Webhook endpoints are a resource quota like channels: concurrent
// creations cannot overshoot it, and GET /account's limits count them.
func TestWebhookEndpointQuota(t *testing.T) {
	t.Parallel()
	st := store.New(testdb.New(t), "P7D")
	st.Accounts.Quotas = accountdb.Quotas{WebhookEndpoints: 3, Channels: 5, EventTypes: 6, DailySends: 7, RecipientDailyCap: 2}
	ctx := context.Background()
	acc, _, err := st.Accounts.CreateAccount(ctx, "Acme")
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
