// Package authdb keeps what the API's authentication reads and writes:
// API clients (api_clients), the built-in issuer's signing keys
// (signing_keys) and the last use of each access token (token_uses). No
// change of another aggregate shares their transactions.
package authdb

import (
	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/pg"
)

// Store is the repository of clients, signing keys and token uses.
type Store struct {
	*pg.DB
	db *sqlx.DB
}

// New is the repository on db.
func New(db *pg.DB) *Store { return &Store{DB: db, db: db.Pool()} }
