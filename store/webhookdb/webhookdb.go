// Package webhookdb keeps an account's webhook endpoints
// (webhook_endpoints) and the deliveries written for them
// (webhook_deliveries): the endpoints' settings and sealed secrets, the
// delivery rows each change writes in its own transaction (EmitTx, with
// a body package webhook builds from the change's fact), their attempts,
// the starter's claim and the replay of failed ones.
package webhookdb

import (
	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Store is the repository of webhook endpoints and deliveries.
type Store struct {
	*pg.DB
	db *sqlx.DB
	// Accounts holds the endpoints to the account's quota.
	Accounts *accountdb.Store
	// Messages builds the bodies of the deliveries (webhook.Messages).
	// Required before a change is written for a subscribed endpoint.
	Messages Messages
	emit     emitter
}

// New is the repository on db; accounts holds the account's quotas.
func New(db *pg.DB, accounts *accountdb.Store) *Store {
	return &Store{DB: db, db: db.Pool(), Accounts: accounts, emit: emitter{source: pg.NewStmt(db.Pool(), sourceSQL)}}
}
