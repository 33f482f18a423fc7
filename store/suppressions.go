package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/persondb"
)

// Suppression is one address on an account's suppression list: it gets
// no invite and no reminder, whatever the medium.
type Suppression struct {
	AccountID string                   `db:"account_id"`
	Address   string                   `db:"id"` // email in lower case, or a mobile number in E.164
	Medium    invite.Medium            `db:"medium"`
	Reason    invite.SuppressionReason `db:"reason"`
	EventID   *string                  `db:"event_id"` // the event it came from, if any
	By        string                   `db:"added_by"` // who put it there: see SuppressionChange.By
	CreatedAt time.Time                `db:"created_at"`
}

// Who made a change of the suppression list (SuppressionChange.By,
// Suppression.By): the customer, the operator (the admin CLI), the mail
// or SMS provider whose refusal or report made it, or an API client by
// its id.
const (
	ActorCustomer = string(people.Customer)
	ActorOperator = string(people.Operator)
	ActorProvider = "provider"
)

// SuppressionChange is one line of an address's history on the list.
type SuppressionChange struct {
	ID     int64                    `db:"id"`
	Action string                   `db:"action"` // "added" or "lifted"
	Reason invite.SuppressionReason `db:"reason"` // the entry's reason
	// By is who made the change: ActorCustomer (an unsubscribe, an SMS
	// STOP), ActorProvider, ActorOperator (the admin CLI) or an API
	// client's id.
	By string    `db:"by"`
	At time.Time `db:"at"`
}

// ErrConsentNeeded: the entry records the customer's own wish (an
// unsubscribe or a spam complaint); lifting it needs their consent.
var ErrConsentNeeded = errors.New("lifting needs the customer's consent")

// suppressionsTable names the address "id", so the list's keyset and
// order (created_at, id) work as for every other list.
const suppressionsTable = `(SELECT account_id, address AS id, medium, reason, event_id, added_by, created_at FROM suppressions) s`

// addedBy is who made an entry of the reason when the caller does not
// say: the customer asked, or the provider refused.
func addedBy(reason invite.SuppressionReason) string {
	switch reason {
	case invite.Unsubscribed:
		return ActorCustomer
	case invite.Bounced, invite.Complained:
		return ActorProvider
	}
	return "unknown"
}

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

// AddSuppression puts address on the account's list for an event's
// customer or provider (by follows from the reason: unsubscribed is the
// customer's, bounced and complained the provider's), or leaves an entry
// that exists as it is (created = false). The address must be normalised
// already (email lower case, mobile E.164).
func (s *Store) AddSuppression(ctx context.Context, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, eventID string) (sup Suppression, created bool, err error) {
	return s.addSuppressionTx(ctx, accountID, address, medium, reason, eventID, addedBy(reason))
}

// AddSuppressionBy is AddSuppression for an entry that someone makes by
// hand: by is an API client's id or ActorOperator.
func (s *Store) AddSuppressionBy(ctx context.Context, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, by string) (sup Suppression, created bool, err error) {
	return s.addSuppressionTx(ctx, accountID, address, medium, reason, "", by)
}

func (s *Store) addSuppressionTx(ctx context.Context, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, eventID, by string) (sup Suppression, created bool, err error) {
	if err := s.invite.prepareForTx(ctx); err != nil {
		return Suppression{}, false, fmt.Errorf("suppress address: %w", translate(err))
	}
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		sup, created, err = s.addSuppressionAs(ctx, tx, accountID, address, medium, reason, eventID, by)
		return err
	})
	if err != nil {
		return Suppression{}, false, fmt.Errorf("suppress address: %w", err)
	}
	return sup, created, nil
}

// addSuppression is AddSuppression inside tx.
func (s *Store) addSuppression(ctx context.Context, tx *sqlx.Tx, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, eventID string) (Suppression, bool, error) {
	return s.addSuppressionAs(ctx, tx, accountID, address, medium, reason, eventID, addedBy(reason))
}

// addSuppressionAs adds the entry and its history line inside tx. It takes
// the address lock first and reads the time after it, so the entry's
// created_at is never earlier than the claim of a send that the lock let
// go first.
func (s *Store) addSuppressionAs(ctx context.Context, tx *sqlx.Tx, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, eventID, by string) (Suppression, bool, error) {
	// An opt-out through an event's invite is counted on the event: its
	// row is locked first, as every send locks it before the address.
	countOnEvent := reason == invite.Unsubscribed && eventID != ""
	if countOnEvent {
		if err := s.invite.lockEvent.Exec(ctx, tx, eventID); err != nil {
			return Suppression{}, false, err
		}
	}
	if err := s.invite.addressLock.Exec(ctx, tx, suppressionLockKey(accountID, address)); err != nil {
		return Suppression{}, false, err
	}
	var ev *string
	if eventID != "" {
		ev = &eventID
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO suppressions (account_id, address, medium, reason, event_id, added_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (account_id, address) DO NOTHING`,
		accountID, address, medium, reason, ev, by, s.Now())
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
		err = addSuppressionChange(ctx, tx, accountID, address, "added", reason, by, sup.CreatedAt)
	}
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

// addSuppressionChange writes a line of the address's history and, when
// a person, an API client or the operator made it (not the customer nor a
// provider), of the account's audit trail: there without the address,
// which is the customer's data.
func addSuppressionChange(ctx context.Context, tx *sqlx.Tx, accountID, address, action string,
	reason invite.SuppressionReason, by string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO suppression_history (account_id, address, action, reason, by, at)
		VALUES ($1, $2, $3, $4, $5, $6)`, accountID, address, action, reason, by, at)
	if err != nil {
		return err
	}
	if a := people.Actor(by); !(a.IsPerson() || a.IsClient() || a == people.Operator) {
		return nil
	}
	audit := persondb.AuditSuppressionAdded
	if action == "lifted" {
		audit = persondb.AuditSuppressionLifted
	}
	return persondb.RecordTx(ctx, tx, at, persondb.Entry{AccountID: accountID, Actor: people.Actor(by), Action: audit,
		Detail: map[string]string{"reason": string(reason)}})
}

// LiftSuppression takes an address off the list, by an API client's id or
// ActorOperator; ErrNotFound when it is not listed. An entry that records
// the customer's own wish (unsubscribed, complained) is lifted only with
// customerConsent, else ErrConsentNeeded.
func (s *Store) LiftSuppression(ctx context.Context, accountID, address, by string, customerConsent bool) error {
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var reason invite.SuppressionReason
		err := tx.GetContext(ctx, &reason, `DELETE FROM suppressions WHERE account_id = $1 AND address = $2 RETURNING reason`,
			accountID, address)
		if err != nil {
			return translate(err)
		}
		if reason.CustomersWish() && !customerConsent {
			return ErrConsentNeeded // rolls the delete back
		}
		return addSuppressionChange(ctx, tx, accountID, address, "lifted", reason, by, s.Now())
	})
	if err != nil {
		return fmt.Errorf("lift suppression: %w", err)
	}
	return nil
}

// SuppressionHistory returns a page of the address's changes on the
// account's list, newest first (ErrNotFound: it was never listed).
func (s *Store) SuppressionHistory(ctx context.Context, accountID, address string, p Page) ([]SuppressionChange, *Cursor, error) {
	args := []any{accountID, address}
	cond := "TRUE"
	if p.After != nil {
		n, err := strconv.ParseInt(p.After.ID, 10, 64)
		if err != nil {
			return nil, nil, ErrBadCursor
		}
		cond, args = "(at, id) < ($3, $4)", append(args, p.After.CreatedAt, n)
	}
	var cs []SuppressionChange
	if err := s.read(ctx).SelectContext(ctx, &cs, `SELECT id, action, reason, by, at FROM suppression_history
		WHERE account_id = $1 AND address = $2 AND `+cond+` ORDER BY at DESC, id DESC LIMIT `+strconv.Itoa(pageLimit(p)+1),
		args...); err != nil {
		return nil, nil, translate(err)
	}
	if len(cs) == 0 && p.After == nil {
		return nil, nil, ErrNotFound
	}
	cs, next := trim(cs, pageLimit(p), func(c SuppressionChange) Cursor {
		return Cursor{CreatedAt: c.At, ID: strconv.FormatInt(c.ID, 10)}
	})
	return cs, next, nil
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
	if err := s.read(ctx).SelectContext(ctx, &sups, query, args...); err != nil {
		return nil, nil, translate(err)
	}
	sups, next := trim(sups, pageLimit(p), func(x Suppression) Cursor { return Cursor{CreatedAt: x.CreatedAt, ID: x.Address} })
	return sups, next, nil
}
