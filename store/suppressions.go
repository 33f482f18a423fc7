package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
)

// Suppression is one address on an account's suppression list: it gets
// no invite and no reminder, whatever the medium.
type Suppression struct {
	AccountID string                   `db:"account_id"`
	Address   string                   `db:"id"` // email in lower case, or a mobile number in E.164
	Medium    invite.Medium            `db:"medium"`
	Reason    invite.SuppressionReason `db:"reason"`
	EventID   *string                  `db:"event_id"` // the event it came from, if any
	CreatedAt time.Time                `db:"created_at"`
}

// suppressionsTable names the address "id", so the list's keyset and
// order (created_at, id) work as for every other list.
const suppressionsTable = `(SELECT account_id, address AS id, medium, reason, event_id, created_at FROM suppressions) s`

// SuppressionFilter narrows ListSuppressions; "" does not filter.
type SuppressionFilter struct {
	Reason  invite.SuppressionReason
	Address string // exact, after normalisation (email lower case)
}

// suppressionLockKey is the advisory lock that orders the suppression of
// an address against sends to it: ClaimSend holds it while it reads
// the list, AddSuppression while it writes, so no send is claimed for an
// address once its suppression has committed.
func suppressionLockKey(accountID, address string) string {
	return "touchpoint:address:" + accountID + ":" + address
}

// AddSuppression puts address on the account's list, or leaves an entry
// that exists as it is (created = false). The address must be normalised
// already (email lower case, mobile E.164).
func (s *Store) AddSuppression(ctx context.Context, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, eventID string) (sup Suppression, created bool, err error) {
	if err := s.invite.prepareForTx(ctx, s.db); err != nil {
		return Suppression{}, false, fmt.Errorf("suppress address: %w", translate(err))
	}
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		sup, created, err = s.addSuppression(ctx, tx, accountID, address, medium, reason, eventID)
		return err
	})
	if err != nil {
		return Suppression{}, false, fmt.Errorf("suppress address: %w", err)
	}
	return sup, created, nil
}

// addSuppression is AddSuppression inside tx. It takes the address lock
// first and reads the time after it, so the entry's created_at is never
// earlier than the claim of a send that the lock let go first.
func (s *Store) addSuppression(ctx context.Context, tx *sqlx.Tx, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, eventID string) (Suppression, bool, error) {
	// An opt-out through an event's invite is counted on the event: its
	// row is locked first, as every send locks it before the address.
	countOnEvent := reason == invite.Unsubscribed && eventID != ""
	if countOnEvent {
		if err := s.execPrepared(ctx, tx, &s.invite.lockEvent, eventID); err != nil {
			return Suppression{}, false, err
		}
	}
	if err := s.execPrepared(ctx, tx, &s.invite.addressLock, suppressionLockKey(accountID, address)); err != nil {
		return Suppression{}, false, err
	}
	var ev *string
	if eventID != "" {
		ev = &eventID
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO suppressions (account_id, address, medium, reason, event_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (account_id, address) DO NOTHING`,
		accountID, address, medium, reason, ev, s.Now())
	if err != nil {
		return Suppression{}, false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Suppression{}, false, err
	}
	var sup Suppression
	err = tx.GetContext(ctx, &sup, `SELECT * FROM `+suppressionsTable+` WHERE account_id = $1 AND id = $2`, accountID, address)
	if err == nil && n == 1 {
		err = s.emitSuppressionWebhook(ctx, tx, sup)
	}
	if err == nil && n == 1 && countOnEvent {
		err = s.markUnsubscribed(ctx, tx, eventID)
	}
	return sup, n == 1, err
}

// Suppression returns one entry of the account's list (ErrNotFound).
func (s *Store) Suppression(ctx context.Context, accountID, address string) (Suppression, error) {
	var sup Suppression
	err := s.db.GetContext(ctx, &sup, `SELECT * FROM `+suppressionsTable+` WHERE account_id = $1 AND id = $2`, accountID, address)
	return sup, translate(err)
}

// DeleteSuppression lifts a suppression; ErrNotFound when there is none.
func (s *Store) DeleteSuppression(ctx context.Context, accountID, address string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM suppressions WHERE account_id = $1 AND address = $2`, accountID, address)
	if err != nil {
		return translate(err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return cmpErr(err, ErrNotFound)
	}
	return nil
}

// ListSuppressions returns a page of the account's list, newest first.
func (s *Store) ListSuppressions(ctx context.Context, accountID string, f SuppressionFilter, p Page) ([]Suppression, *Cursor, error) {
	w := newWhere(accountID)
	if f.Reason != "" {
		w.add("reason = ", f.Reason)
	}
	if f.Address != "" {
		w.add("id = ", strings.ToLower(f.Address))
	}
	var sups []Suppression
	query, args := w.page(`SELECT * FROM `+suppressionsTable, p)
	if err := s.db.SelectContext(ctx, &sups, query, args...); err != nil {
		return nil, nil, translate(err)
	}
	sups, next := trim(sups, pageLimit(p), func(x Suppression) Cursor { return Cursor{x.CreatedAt, x.Address} })
	return sups, next, nil
}

// cmpErr is err when there is one, else fallback.
func cmpErr(err, fallback error) error {
	if err != nil {
		return translate(err)
	}
	return fallback
}
