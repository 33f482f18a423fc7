package invitedb

import (
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
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/reportdb"
)

// ErrInviteState: the invite's state does not allow the change (409).
var ErrInviteState = errors.New("invite state does not allow this")

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
	// "errorCode","updatedAt"}}, or nil (reportdb.SMSDeliveryColumn).
	SMSDelivery []byte `db:"sms_delivery"`
	// MailDelivery is the delivery status of the invite's and the
	// reminder's mail as the providers reported it: a JSON object of
	// reportdb.MailDelivery keyed by kind; nil before the first report.
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
	` + reportdb.SMSDeliveryColumn + `, ` + reportdb.MailDeliveryColumn

// Event returns one event of an account.
func (s *Store) Event(ctx context.Context, accountID, id string) (Event, error) {
	var e Event
	err := s.db.GetContext(ctx, &e, `SELECT `+eventColumns+` FROM events WHERE id = $1 AND account_id = $2`, id, accountID)
	return e, pg.Translate(err)
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
func (s *Store) ListEvents(ctx context.Context, accountID string, f EventFilter, p pg.Page) ([]Event, *pg.Cursor, error) {
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
	if err := s.ReadPlanned(ctx).SelectContext(ctx, &rows, q, args...); err != nil {
		return nil, nil, fmt.Errorf("list events: %w", pg.Translate(err))
	}
	rows, next := pg.Trim(rows, p.Limit, func(e Event) pg.Cursor { return pg.Cursor{CreatedAt: e.ReceivedAt, ID: e.ID} })
	return rows, next, nil
}

// CancelInvite decides a cancel in PostgreSQL (invite.CancelWaiting): a
// pending or scheduled invite becomes cancelled; a sent invite whose
// reminder is scheduled keeps its invite and has the reminder cancelled;
// a cancel already made stays so. Anything else — a send under way, a
// reminder being sent, sent, skipped, failed — is ErrInviteState. The row
// lock orders it against the steps of invite and reminder.
func (s *Store) CancelInvite(ctx context.Context, accountID, id string) (Event, error) {
	return s.decideForAccount(ctx, accountID, id, persondb.AuditInviteCancelled, func(inv, rem invite.State) (invite.Change, error) {
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
	return s.decideForAccount(ctx, accountID, id, persondb.AuditInviteRetried, func(inv, _ invite.State) (invite.Change, error) {
		return invite.Retry(inv)
	})
}

// decideForAccount runs a rule of the shop's (cancel, retry) on the
// account's event: it locks the row, reads both sends, applies the
// change, records it in the audit trail as action, and returns the event
// as written. A refusal is ErrInviteState.
func (s *Store) decideForAccount(ctx context.Context, accountID, id, action string,
	rule func(inv, rem invite.State) (invite.Change, error)) (Event, error) {
	var e Event
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
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
		if c.Changed() { // a cancel made again changes nothing, and is not a change of the trail
			if err := persondb.RecordChange(ctx, tx, s.Now(), accountID, action, id, map[string]string{"send": string(c.Kind)}); err != nil {
				return err
			}
		}
		return tx.GetContext(ctx, &e, `SELECT `+eventColumns+` FROM events WHERE id = $1`, id)
	})
	return e, err
}
