// Package templatedb keeps a shop's own templates: the version in force
// of each (account or event type, kind, language) in message_templates,
// every version stored in message_template_versions, and the test sends
// of a template to the shop's own address (template_test_sends) with the
// starter's claim of their workflows. It keeps what it is given — a
// template's kind and content as the caller encoded them, the source and
// version a message was rendered from — and decides nothing: package
// templates checks what may be stored, chooses between the levels and
// renders.
package templatedb

import (
	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Store is the repository of templates and test sends.
type Store struct {
	*pg.DB
	db *sqlx.DB
	// accounts counts a test send against the account's limits.
	accounts *accountdb.Store
}

// New is the repository on db; accounts holds the account's limits.
func New(db *pg.DB, accounts *accountdb.Store) *Store {
	return &Store{DB: db, db: db.Pool(), accounts: accounts}
}
