// Package eventdb keeps what a shop's systems send and the orders to act
// on it: the accept path (events as accepted, idempotency_keys, one
// statement per group of concurrent events, committed together, which
// counts them against the account's daily event quota), and the outbox of workflow starts (outbox) that the starters
// claim, with the LISTEN/NOTIFY that wakes them. The invite state an
// event then carries is written by the invite's steps.
package eventdb

import (
	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Store is the repository of accepted events and the outbox.
type Store struct {
	*pg.DB
	db *sqlx.DB
	// accounts counts the accepted events against each account's daily
	// event quota, in the statement that stores them.
	accounts *accountdb.Store
	// accepts groups concurrent AcceptEvent calls into one commit.
	accepts acceptQueue
	// The accept statement is prepared once (see pg.Stmt).
	acceptStmt *pg.Stmt
}

// New is the repository on db, whose accepts count against the quotas of
// accounts.
func New(db *pg.DB, accounts *accountdb.Store) *Store {
	return &Store{DB: db, db: db.Pool(), accounts: accounts, acceptStmt: pg.NewStmt(db.Pool(), acceptSQL)}
}
