// Package storeset builds the store's repositories on one pool and one
// clock, wired to the capability packages that decide what they write
// (the bodies of webhook messages). The processes and the tests build
// their repositories here, so no repository goes unwired.
package storeset

import (
	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/webhook"
)

// New builds the repositories on db; defaultInviteDelay is the delay of
// automatically created invite settings ("" means P7D).
func New(db *sqlx.DB, defaultInviteDelay string) *store.Store {
	st := store.New(db, defaultInviteDelay)
	st.Webhooks.Messages = webhook.Messages{}
	return st
}

// People is the repository of people on st's pool.
func People(st *store.Store) *persondb.Store { return persondb.New(pg.NewDB(st.DB())) }
