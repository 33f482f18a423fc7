package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/statsdb"
)

var (
	// ErrUnknownEventType: no event type of that name in the account.
	ErrUnknownEventType = errors.New("unknown event type")
	// ErrUnknownChannel: no channel of that id in the account.
	ErrUnknownChannel = errors.New("unknown channel")
	// ErrIdempotencyMismatch: the Idempotency-Key was used with another body.
	ErrIdempotencyMismatch = errors.New("idempotency key reused with a different request")
	// ErrInviteState: the invite's state does not allow the change (409).
	ErrInviteState = errors.New("invite state does not allow this")
)

// IdempotencyTTL is how long an Idempotency-Key is remembered.
const IdempotencyTTL = 48 * time.Hour

// NewEvent is an event to accept: its searchable fields and the whole
// normalised request as Payload.
type NewEvent struct {
	AccountID             string
	Type                  string // the event type's name
	ChannelID             string
	CustomerEmail         string
	CustomerReference     string
	TransactionReference  string
	TransactionDate       time.Time
	EstimatedDeliveryDate *time.Time // a calendar date (UTC midnight)
	Payload               json.RawMessage

	// IdempotencyKey is optional; RequestHash identifies the request body.
	IdempotencyKey string
	RequestHash    []byte
}

// Accepted is the outcome of AcceptEvent.
type Accepted struct {
	EventID string
	// Replayed: an earlier request with the same Idempotency-Key was
	// accepted; nothing new was stored.
	Replayed bool
}

// acceptSQL stores the event, its outbox row and its idempotency key in
// one statement (one round trip, atomic): the event type and the invite
// setting of (type, channel) are looked up in CTEs, and nothing is
// written when either is missing. Foreign keys are checked at the end of
// the statement, so the key row may reference the event inserted beside it.
var acceptSQL = `
WITH et AS (
    SELECT id FROM event_types WHERE account_id = $2 AND name = $3
), ist AS (
    SELECT s.id, s.medium, s.delay, s.delay_from, s.send_window
    FROM invite_settings s JOIN et ON s.event_type_id = et.id
    WHERE s.account_id = $2 AND s.channel_id = $4
), ik AS (
    INSERT INTO idempotency_keys (account_id, key, request_hash, event_id, created_at, expires_at)
    SELECT $2, $11, $12, $1, $6, $13 FROM ist WHERE $11 <> ''
    ON CONFLICT (account_id, key) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, event_id = EXCLUDED.event_id,
            created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
    RETURNING 1
), ev AS (
    INSERT INTO events (id, account_id, event_type_id, channel_id, received_at, type,
        customer_email, customer_reference, transaction_reference, transaction_date,
        estimated_delivery_date, payload, invite_setting_id, delay, delay_from, send_window,
        invite_medium, locale, updated_at)
    SELECT $1, $2, et.id, $4, $6, $3, $5, NULLIF($7, ''), $8, $9, $10, $14,
        ist.id, ist.delay, ist.delay_from, ist.send_window, ist.medium, touchpoint_language($14::jsonb ->> 'defaultLocale'), $6
    FROM et, ist
    WHERE $11 = '' OR EXISTS (SELECT 1 FROM ik)
    RETURNING id, received_at, account_id, event_type_id, channel_id, locale, invite_medium
), ob AS (
    INSERT INTO outbox (event_id, kind, created_at, next_attempt_at)
    SELECT id, 'start', $6, $6 - interval '` + singleHeadStart + `' FROM ev
), ` + statsdb.AcceptedCTE() + `
SELECT EXISTS (SELECT 1 FROM et) AS type_found,
       EXISTS (SELECT 1 FROM ist) AS setting_found,
       EXISTS (SELECT 1 FROM ev) AS inserted`

// AcceptEvent durably stores an event together with the order to start
// its workflow. With an Idempotency-Key that was seen before it returns
// the original event (Replayed) or ErrIdempotencyMismatch; a concurrent
// repeat of a new key waits for the first and gets the same answer.
// Concurrent events without a key are committed together (acceptbatch.go).
func (s *Store) AcceptEvent(ctx context.Context, e NewEvent) (Accepted, error) {
	id, now := NewID("evt"), s.Now()
	if e.IdempotencyKey == "" {
		return s.accepts.accept(s, &acceptCall{ctx: ctx, event: e, id: id, now: now})
	}
	return s.acceptOne(ctx, e, id, now)
}

// acceptOne runs acceptSQL: one event, with or without an Idempotency-Key.
func (s *Store) acceptOne(ctx context.Context, e NewEvent, id string, now time.Time) (Accepted, error) {
	var delivery any
	if e.EstimatedDeliveryDate != nil {
		delivery = e.EstimatedDeliveryDate.Format(time.DateOnly)
	}
	hash := e.RequestHash
	if hash == nil {
		hash = []byte{}
	}
	var r struct {
		TypeFound    bool `db:"type_found"`
		SettingFound bool `db:"setting_found"`
		Inserted     bool `db:"inserted"`
	}
	err := s.getPrepared(ctx, nil, &s.acceptStmt, &r, id, e.AccountID, e.Type, e.ChannelID, e.CustomerEmail,
		now, e.CustomerReference, e.TransactionReference, e.TransactionDate.UTC(), delivery,
		e.IdempotencyKey, hash, now.Add(IdempotencyTTL), []byte(e.Payload))
	if err != nil {
		return Accepted{}, fmt.Errorf("accept event: %w", translate(err))
	}
	if r.SettingFound && !r.Inserted {
		return s.replay(ctx, e, hash)
	}
	return acceptOutcome(id, r.TypeFound, r.SettingFound)
}

// acceptOutcome is the answer to an accept statement that found the
// event type and invite setting or not; when it found both, it stored
// the event.
func acceptOutcome(id string, typeFound, settingFound bool) (Accepted, error) {
	switch {
	case !typeFound:
		return Accepted{}, ErrUnknownEventType
	case !settingFound:
		return Accepted{}, ErrUnknownChannel
	}
	return Accepted{EventID: id}, nil
}

// replay answers a repeat of an Idempotency-Key that is taken and still
// live as the first request was answered.
func (s *Store) replay(ctx context.Context, e NewEvent, hash []byte) (Accepted, error) {
	var prior struct {
		Hash    []byte `db:"request_hash"`
		EventID string `db:"event_id"`
	}
	err := s.db.GetContext(ctx, &prior, `SELECT request_hash, event_id FROM idempotency_keys WHERE account_id = $1 AND key = $2`,
		e.AccountID, e.IdempotencyKey)
	if err != nil {
		return Accepted{}, fmt.Errorf("read idempotency key: %w", translate(err))
	}
	if !bytes.Equal(prior.Hash, hash) {
		return Accepted{}, ErrIdempotencyMismatch
	}
	return Accepted{EventID: prior.EventID, Replayed: true}, nil
}

// Event is a stored event with its invite state.
type Event struct {
	ID                string          `db:"id"`
	AccountID         string          `db:"account_id"`
	EventTypeID       string          `db:"event_type_id"`
	ChannelID         string          `db:"channel_id"`
	ReceivedAt        time.Time       `db:"received_at"`
	Type              string          `db:"type"`
	CustomerReference sql.NullString  `db:"customer_reference"`
	Payload           json.RawMessage `db:"payload"`
	InviteStatus      invite.Status   `db:"invite_status"`
	InviteReason      sql.NullString  `db:"invite_reason"`
	InviteMedium      sql.NullString  `db:"invite_medium"`
	ScheduledFor      sql.NullTime    `db:"scheduled_for"`
	SentAt            sql.NullTime    `db:"sent_at"`
	Attempts          int             `db:"attempts"`
	LastError         sql.NullString  `db:"last_error"`
	UpdatedAt         time.Time       `db:"updated_at"`
	// The reminder of the invite (ReminderStatus NULL: none planned).
	ReminderStatus       sql.NullString `db:"reminder_status"`
	ReminderReason       sql.NullString `db:"reminder_reason"`
	ReminderScheduledFor sql.NullTime   `db:"reminder_scheduled_for"`
	ReminderSentAt       sql.NullTime   `db:"reminder_sent_at"`
	// Review is the event's review as {"id","rating","createdAt"}, or nil.
	Review []byte `db:"review"`
	// SMSDelivery is what the SMS provider last reported of the invite's
	// and the reminder's messages, as {"invite"|"reminder": {"status",
	// "errorCode","updatedAt"}}, or nil (see sms.go).
	SMSDelivery []byte `db:"sms_delivery"`
	// MailDelivery is the delivery status of the invite's and the
	// reminder's mail as the providers reported it: a JSON object of
	// MailDelivery keyed by kind; nil before the first report.
	MailDelivery []byte `db:"mail_delivery"`
	// AttemptHistory is the event's send attempts as JSON (see History).
	AttemptHistory []byte `db:"attempt_history"`
	// ErasedAt is when the customer's data was erased (EraseCustomer).
	ErasedAt sql.NullTime `db:"erased_at"`
	// OpenedAt is when the customer first opened the feedback page
	// (MarkOpened).
	OpenedAt sql.NullTime `db:"opened_at"`
}

const eventColumns = `id, account_id, event_type_id, channel_id, received_at, type, customer_reference, payload,
	invite_status, invite_reason, invite_medium, scheduled_for, sent_at, attempts, last_error, updated_at,
	reminder_status, reminder_reason, reminder_scheduled_for, reminder_sent_at,
	(SELECT json_build_object('id', r.id, 'rating', r.rating, 'createdAt', r.created_at)
	 FROM reviews r WHERE r.event_id = events.id) AS review, erased_at, opened_at, ` + attemptsColumn + `,
	` + smsDeliveryColumn + `, ` + mailDeliveryColumn

// Event returns one event of an account.
func (s *Store) Event(ctx context.Context, accountID, id string) (Event, error) {
	var e Event
	err := s.db.GetContext(ctx, &e, `SELECT `+eventColumns+` FROM events WHERE id = $1 AND account_id = $2`, id, accountID)
	return e, translate(err)
}

// EventFilter narrows ListEvents; zero values do not filter.
type EventFilter struct {
	Type                 string
	ChannelID            string
	Status               invite.Status // an API status; Scheduled includes Sending
	CustomerEmail        string        // compared case-insensitively
	TransactionReference string
	ReceivedFrom         time.Time // inclusive
	ReceivedTo           time.Time // exclusive
}

// ListEvents returns a page of an account's events, newest first.
func (s *Store) ListEvents(ctx context.Context, accountID string, f EventFilter, p Page) ([]Event, *Cursor, error) {
	where := []string{"account_id = $1"}
	args := []any{accountID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Type != "" {
		add("type = ?", f.Type)
	}
	if f.ChannelID != "" {
		add("channel_id = ?", f.ChannelID)
	}
	switch f.Status {
	case "":
	case invite.Scheduled:
		// Planned as a row-value IN so the status index serves both.
		where = append(where, "invite_status IN ('scheduled', 'sending')")
	default:
		add("invite_status = ?", f.Status)
	}
	if f.CustomerEmail != "" {
		add("lower(customer_email) = lower(?)", f.CustomerEmail)
	}
	if f.TransactionReference != "" {
		add("transaction_reference = ?", f.TransactionReference)
	}
	if !f.ReceivedFrom.IsZero() {
		add("received_at >= ?", f.ReceivedFrom)
	}
	if !f.ReceivedTo.IsZero() {
		add("received_at < ?", f.ReceivedTo)
	}
	if p.After != nil {
		args = append(args, p.After.CreatedAt, p.After.ID)
		where = append(where, fmt.Sprintf("(received_at, id) < ($%d, $%d)", len(args)-1, len(args)))
	}
	args = append(args, p.Limit+1)
	q := `SELECT ` + eventColumns + ` FROM events WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY received_at DESC, id DESC LIMIT $` + strconv.Itoa(len(args))
	var rows []Event
	if err := s.read(ctx).SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, nil, fmt.Errorf("list events: %w", translate(err))
	}
	rows, next := trim(rows, p.Limit, func(e Event) Cursor { return Cursor{CreatedAt: e.ReceivedAt, ID: e.ID} })
	return rows, next, nil
}

// CancelInvite decides a cancel in PostgreSQL (invite.CancelWaiting): a
// pending or scheduled invite becomes cancelled; a sent invite whose
// reminder is scheduled keeps its invite and has the reminder cancelled;
// a cancel already made stays so. Anything else — a send under way, a
// reminder being sent, sent, skipped, failed — is ErrInviteState. The row
// lock orders it against the steps of invite and reminder.
func (s *Store) CancelInvite(ctx context.Context, accountID, id string) (Event, error) {
	return s.decideForAccount(ctx, accountID, id, func(inv, rem invite.State) (invite.Change, error) {
		return invite.CancelWaiting(inv, rem)
	})
}

// RetryInvite turns a failed invite back to pending (invite.Retry: its
// last error goes; the failed run's history stays in Temporal) and orders
// a new workflow run in the same transaction; other states are
// ErrInviteState. A retry never lifts a suppression (only
// DeleteSuppression does): the retried invite of a suppressed address
// ends skipped.
func (s *Store) RetryInvite(ctx context.Context, accountID, id string) (Event, error) {
	return s.decideForAccount(ctx, accountID, id, func(inv, _ invite.State) (invite.Change, error) {
		return invite.Retry(inv)
	})
}

// decideForAccount runs a rule of the shop's (cancel, retry) on the
// account's event: it locks the row, reads both sends, applies the
// change, and returns the event as written. A refusal is ErrInviteState.
func (s *Store) decideForAccount(ctx context.Context, accountID, id string,
	rule func(inv, rem invite.State) (invite.Change, error)) (Event, error) {
	var e Event
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var owned bool
		if err := tx.GetContext(ctx, &owned, `SELECT true FROM events WHERE id = $1 AND account_id = $2 FOR UPDATE`, id, accountID); err != nil {
			return err
		}
		var inv, rem sendState
		if err := tx.GetContext(ctx, &inv, lockInviteSQL, id); err != nil {
			return err
		}
		if err := tx.GetContext(ctx, &rem, lockReminderSQL, id); err != nil {
			return err
		}
		c, err := rule(inv.State, rem.State)
		switch {
		case errors.Is(err, invite.ErrRefused):
			return ErrInviteState
		case err != nil:
			return err
		}
		if err := s.apply(ctx, tx, id, c); err != nil {
			return err
		}
		return tx.GetContext(ctx, &e, `SELECT `+eventColumns+` FROM events WHERE id = $1`, id)
	})
	return e, err
}
