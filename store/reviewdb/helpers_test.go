package reviewdb_test

import (
	"testing"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/webhookfixture"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
)

// newStore is every repository on a fresh database, and a maker of
// accounts with their setting there.
func newStore(t *testing.T) (*store.Store, func(eventfixture.Setting) *eventfixture.Account) {
	t.Helper()
	db := testdb.New(t)
	st := storeset.New(db, "P7D")
	return st, func(s eventfixture.Setting) *eventfixture.Account {
		return eventfixture.NewAccount(t, db, s)
	}
}

// The webhook helpers of internal/webhookfixture, by their names here.
var (
	webhookStore = webhookfixture.Store
	ticking      = webhookfixture.Ticking
	endpoint     = webhookfixture.Endpoint
	deliveries   = webhookfixture.Deliveries
	typesOf      = webhookfixture.TypesOf
)
