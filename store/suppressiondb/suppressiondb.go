// Package suppressiondb keeps an account's suppression list: the
// addresses that get no invite and no reminder (suppressions), the
// history of each address on the list (suppression_history), and the
// suppression.created webhook each new entry writes. A send's claim and a
// template test check the list under the same (account, address) lock
// that a change of the list takes, so no send is claimed for an address
// once its suppression has committed.
package suppressiondb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/statsdb"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// Store is the repository of the suppression list.
type Store struct {
	*pg.DB
	db *sqlx.DB
	// stats counts an opt-out through an event's invite on the event.
	stats *statsdb.Store
	// webhooks writes suppression.created with each new entry.
	webhooks *webhookdb.Store
	// Run inside the transactions of a send's claim and of a change of
	// the list, prepared once.
	addressLock, listed *pg.Stmt
}

// New is the repository on db; stats counts the opt-outs, webhooks
// reports the new entries.
func New(db *pg.DB, stats *statsdb.Store, webhooks *webhookdb.Store) *Store {
	return &Store{DB: db, db: db.Pool(), stats: stats, webhooks: webhooks,
		addressLock: pg.NewStmt(db.Pool(), `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`),
		listed:      pg.NewStmt(db.Pool(), `SELECT EXISTS (SELECT 1 FROM suppressions WHERE account_id = $1 AND address = $2)`)}
}

// Prepare makes the statements that run inside a send's claim and a
// change of the list ready before its transaction begins (see
// pg.Stmt.On).
func (s *Store) Prepare(ctx context.Context) error {
	return pg.PrepareAll(ctx, s.addressLock, s.listed)
}

// lockKey is the advisory lock that orders the suppression of
// an address against sends to it: a send's claim holds it while it reads
// the list, AddSuppression while it writes, so no send is claimed for an
// address once its suppression has committed.
func lockKey(accountID, address string) string {
	return "touchpoint:address:" + accountID + ":" + address
}

// LockAddressTx takes the (account, address) lock for the rest of tx.
func (s *Store) LockAddressTx(ctx context.Context, tx *sqlx.Tx, accountID, address string) error {
	return s.addressLock.Exec(ctx, tx, lockKey(accountID, address))
}

// ListedTx reports whether address is on the account's list, in tx.
func (s *Store) ListedTx(ctx context.Context, tx *sqlx.Tx, accountID, address string) (bool, error) {
	var listed bool
	err := s.listed.Get(ctx, tx, &listed, accountID, address)
	return listed, err
}

// ListedAddress is an address as the list spells it: an email address
// in lower case, a mobile number in E.164 as it is.
func ListedAddress(medium invite.Medium, address string) string {
	if medium == invite.SMS {
		return address
	}
	return strings.ToLower(strings.TrimSpace(address))
}

// SuppressedError refuses a send to an address on the account's
// suppression list, with the reason it is there.
type SuppressedError struct {
	Reason invite.SuppressionReason
}

func (e *SuppressedError) Error() string {
	return fmt.Sprintf("the address is on the suppression list (%s)", e.Reason)
}

// RefuseTx takes the (account, address) lock for the rest of the
// transaction, as a send's claim and a suppression take it, and refuses
// an address on the account's suppression list with a *SuppressedError.
func RefuseTx(ctx context.Context, tx *sqlx.Tx, accountID, address string) error {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, lockKey(accountID, address)); err != nil {
		return fmt.Errorf("address lock: %w", err)
	}
	var reason invite.SuppressionReason
	err := tx.GetContext(ctx, &reason, `SELECT reason FROM suppressions WHERE account_id = $1 AND address = $2`, accountID, address)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("suppression list: %w", err)
	}
	return &SuppressedError{Reason: reason}
}
