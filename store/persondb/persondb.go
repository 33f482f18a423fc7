// Package persondb keeps the people who use the console and how they sign
// in: people (people), the external providers' accounts linked to them
// (person_identities), the built-in issuer's one-time sign-in links
// (sign_in_links) and authorization codes (authorization_codes), the
// console's sessions (console_sessions), and the trail of who did what
// (audit_trail). Tokens, codes and cookies are kept as hashes made by the
// caller; this package never sees one in the clear.
package persondb

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/pg"
)

// Store is the repository of people, their sign-ins, sessions and the
// audit trail.
type Store struct {
	*pg.DB
	db *sqlx.DB
}

// New is the repository on db.
func New(db *pg.DB) *Store { return &Store{DB: db, db: db.Pool()} }

// inTx runs fn in a transaction of the pool.
func (s *Store) inTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	return pg.InTx(ctx, s.db, fn)
}
