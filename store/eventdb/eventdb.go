// Package eventdb keeps what a shop's systems send and the orders to act
// on it: the accept path (events as accepted, idempotency_keys, one
// statement per event or per group of concurrent events, committed
// together), and the outbox of workflow starts (outbox) that the starters
// claim, with the LISTEN/NOTIFY that wakes them. The invite state an
// event then carries is written by the invite's steps.
package eventdb

import (
	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/pg"
)

// Store is the repository of accepted events and the outbox.
type Store struct {
	*pg.DB
	db *sqlx.DB
	// accepts groups concurrent AcceptEvent calls into one commit.
	accepts acceptQueue
	// The accept statements are prepared once (see pg.Stmt).
	acceptStmt, acceptBatchStmt, acceptManyStmt *pg.Stmt
}

// New is the repository on db.
func New(db *pg.DB) *Store {
	return &Store{DB: db, db: db.Pool(), acceptStmt: pg.NewStmt(db.Pool(), acceptSQL),
		acceptBatchStmt: pg.NewStmt(db.Pool(), acceptBatchSQL), acceptManyStmt: pg.NewStmt(db.Pool(), acceptManySQL)}
}
