package reportdb_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/webhookfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
)

// The webhook helpers of internal/webhookfixture, by their names here.
var (
	endpoint   = webhookfixture.Endpoint
	deliveries = webhookfixture.Deliveries
	typesOf    = webhookfixture.TypesOf
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
