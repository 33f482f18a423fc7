// Package webhookfixture sets up the webhook endpoints and reads the
// deliveries that the tests of the store's aggregates look at.
package webhookfixture

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// Store is a store over a fresh database, the database itself (for
// what the tests set up beside the store) and an account maker.
func Store(t *testing.T) (*store.Store, *sqlx.DB, func(eventfixture.Setting) *eventfixture.Account) {
	t.Helper()
	db := testdb.New(t)
	st := storeset.New(db, "P7D")
	return st, db, func(s eventfixture.Setting) *eventfixture.Account {
		return eventfixture.NewAccount(t, db, s)
	}
}

// Ticking makes st's clock advance a millisecond at every reading from
// start, so the rows a test writes have distinct, ordered times.
func Ticking(st *store.Store, start time.Time) {
	var n atomic.Int64
	st.SetClock(func() time.Time { return start.Add(time.Duration(n.Add(1)) * time.Millisecond) })
}

// Endpoint creates an endpoint of account subscribed to events.
func Endpoint(t *testing.T, st *store.Store, accountID string, events ...string) webhookdb.WebhookEndpoint {
	t.Helper()
	id := store.NewID("whk")
	ep, err := st.Webhooks.CreateWebhookEndpoint(context.Background(), webhookdb.WebhookEndpoint{ID: id, AccountID: accountID,
		URL: "https://hooks.example.com/" + id, Events: events, Secret: []byte("sealed " + id)})
	require.NoError(t, err)
	return ep
}

// Deliveries lists an endpoint's deliveries, newest first.
func Deliveries(t *testing.T, st *store.Store, ep webhookdb.WebhookEndpoint) []webhookdb.WebhookDelivery {
	t.Helper()
	ds, _, err := st.Webhooks.ListWebhookDeliveries(context.Background(), ep.AccountID, ep.ID, "", store.Page{Limit: 200})
	require.NoError(t, err)
	return ds
}

// TypesOf are the types of deliveries, oldest first.
func TypesOf(ds []webhookdb.WebhookDelivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[len(ds)-1-i] = d.Type
	}
	return out
}
