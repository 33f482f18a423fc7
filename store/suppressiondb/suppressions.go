package suppressiondb

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
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/webhookdb"
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

// Who makes a change of the list besides an API client (by its id).
const (
	// ActorCustomer: an unsubscribe, an SMS STOP.
	ActorCustomer = string(people.Customer)
	// ActorProvider: a mail or SMS provider's refusal or report.
	ActorProvider = "provider"
	// ActorOperator: the admin CLI.
	ActorOperator = string(people.Operator)
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

// AddSuppression puts address on the account's list for an event's
// customer or provider (by follows from the reason: unsubscribed is the
// customer's, bounced and complained the provider's), or leaves an entry
// that exists as it is (created = false). The address must be normalised
// already (email lower case, mobile E.164).
func (s *Store) AddSuppression(ctx context.Context, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, eventID string) (sup Suppression, created bool, err error) {
	return s.add(ctx, accountID, address, medium, reason, eventID, addedBy(reason))
}

// AddSuppressionBy is AddSuppression for an entry that someone makes by
// hand: by is an API client's id or ActorOperator.
func (s *Store) AddSuppressionBy(ctx context.Context, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, by string) (sup Suppression, created bool, err error) {
	return s.add(ctx, accountID, address, medium, reason, "", by)
}

// add is addAs in a transaction of its own.
func (s *Store) add(ctx context.Context, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, eventID, by string) (sup Suppression, created bool, err error) {
	if err := s.prepare(ctx); err != nil {
		return Suppression{}, false, fmt.Errorf("suppress address: %w", pg.Translate(err))
	}
	err = pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		sup, created, err = s.addAs(ctx, tx, accountID, address, medium, reason, eventID, by)
		return err
	})
	if err != nil {
		return Suppression{}, false, fmt.Errorf("suppress address: %w", err)
	}
	return sup, created, nil
}

// prepare makes the statements of addAs ready (see pg.Stmt.On).
func (s *Store) prepare(ctx context.Context) error {
	if err := s.Prepare(ctx); err != nil {
		return err
	}
	return s.stats.Prepare(ctx)
}

// AddTx is AddSuppression inside tx, for a change of another aggregate
// that suppresses the address with it (a provider's refusal or report).
func (s *Store) AddTx(ctx context.Context, tx *sqlx.Tx, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, eventID string) (Suppression, bool, error) {
	return s.addAs(ctx, tx, accountID, address, medium, reason, eventID, addedBy(reason))
}

// addAs adds the entry and its history line inside tx. It takes
// the address lock first and reads the time after it, so the entry's
// created_at is never earlier than the claim of a send that the lock let
// go first.
func (s *Store) addAs(ctx context.Context, tx *sqlx.Tx, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, eventID, by string) (Suppression, bool, error) {
	// An opt-out through an event's invite is counted on the event: its
	// row is locked first, as every send locks it before the address.
	countOnEvent := reason == invite.Unsubscribed && eventID != ""
	if countOnEvent {
		if err := s.stats.LockEventTx(ctx, tx, eventID); err != nil {
			return Suppression{}, false, err
		}
	}
	if err := s.LockAddressTx(ctx, tx, accountID, address); err != nil {
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
		err = s.emitWebhook(ctx, tx, sup)
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
	return sup, pg.Translate(err)
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
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var reason invite.SuppressionReason
		err := tx.GetContext(ctx, &reason, `DELETE FROM suppressions WHERE account_id = $1 AND address = $2 RETURNING reason`,
			accountID, address)
		if err != nil {
			return pg.Translate(err)
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
func (s *Store) SuppressionHistory(ctx context.Context, accountID, address string, p pg.Page) ([]SuppressionChange, *pg.Cursor, error) {
	args := []any{accountID, address}
	cond := "TRUE"
	if p.After != nil {
		n, err := strconv.ParseInt(p.After.ID, 10, 64)
		if err != nil {
			return nil, nil, pg.ErrBadCursor
		}
		cond, args = "(at, id) < ($3, $4)", append(args, p.After.CreatedAt, n)
	}
	var cs []SuppressionChange
	if err := s.Read(ctx).SelectContext(ctx, &cs, `SELECT id, action, reason, by, at FROM suppression_history
		WHERE account_id = $1 AND address = $2 AND `+cond+` ORDER BY at DESC, id DESC LIMIT `+strconv.Itoa(pg.PageLimit(p)+1),
		args...); err != nil {
		return nil, nil, pg.Translate(err)
	}
	if len(cs) == 0 && p.After == nil {
		return nil, nil, pg.ErrNotFound
	}
	cs, next := pg.Trim(cs, pg.PageLimit(p), func(c SuppressionChange) pg.Cursor {
		return pg.Cursor{CreatedAt: c.At, ID: strconv.FormatInt(c.ID, 10)}
	})
	return cs, next, nil
}

// ListSuppressions returns a page of the account's list, newest first.
func (s *Store) ListSuppressions(ctx context.Context, accountID string, f SuppressionFilter, p pg.Page) ([]Suppression, *pg.Cursor, error) {
	w := pg.NewWhere(accountID)
	if f.Reason != "" {
		w.Add("reason = ", f.Reason)
	}
	if f.Address != "" {
		w.Add("id = ", strings.ToLower(f.Address))
	}
	var sups []Suppression
	next, err := pg.SelectPage(ctx, s.Read(ctx), &sups, w, `SELECT * FROM `+suppressionsTable, p,
		func(x Suppression) pg.Cursor { return pg.Cursor{CreatedAt: x.CreatedAt, ID: x.Address} })
	if err != nil {
		return nil, nil, err
	}
	return sups, next, nil
}

// markUnsubscribed records that the customer opted out through the
// event's invite (the first time only) and counts it.
func (s *Store) markUnsubscribed(ctx context.Context, tx *sqlx.Tx, eventID string) error {
	res, err := tx.ExecContext(ctx, `UPDATE events SET unsubscribed_at = $2 WHERE id = $1 AND unsubscribed_at IS NULL`,
		eventID, s.Now())
	if err != nil {
		return fmt.Errorf("mark unsubscribed: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	return s.stats.CountChangeTx(ctx, tx, eventID, func(before, _ *stats.Facts) { before.Unsubscribed = false })
}

// emitWebhook reports a new entry of the suppression list; when the
// entry came from an event (an unsubscribe link, a bounce), its ID and
// customer reference let the shop find the customer.
func (s *Store) emitWebhook(ctx context.Context, tx *sqlx.Tx, sup Suppression) error {
	f := webhookdb.SuppressionFact{Medium: sup.Medium, Reason: sup.Reason}
	subscribed, err := false, error(nil)
	if sup.EventID == nil {
		subscribed, err = webhookdb.SubscribedTx(ctx, tx, sup.AccountID, webhookdb.SuppressionCreated)
	} else {
		f.EventID = *sup.EventID
		f.CustomerReference, subscribed, err = s.webhooks.ReferenceTx(ctx, tx, sup.AccountID, *sup.EventID, webhookdb.SuppressionCreated)
	}
	if err != nil || !subscribed {
		return err
	}
	return s.webhooks.EmitTx(ctx, tx, sup.AccountID, webhookdb.SuppressionCreated, sup.CreatedAt, f)
}
