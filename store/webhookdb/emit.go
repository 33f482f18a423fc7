package webhookdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Emitting webhooks is an outbox write: each state change that an
// endpoint may subscribe to inserts its delivery rows in the transaction
// that makes the change, so the change cannot commit without them, nor
// they without it. The writers call EmitTx at the point of each write
// with the Fact of what they wrote; the body is built by Messages (package
// webhook) from the fact alone, and this package writes the bytes it is
// given. Facts carry the event row's IDs, statuses and customer
// reference, never its customer data.

// Messages builds the body of the message of type typ, timestamped at,
// that reports fact. Package webhook implements it; the store never
// decides what a message says.
type Messages interface {
	Body(typ string, at time.Time, fact Fact) ([]byte, error)
}

// A Fact is what a change wrote that a webhook message reports: one of
// SendFact, DeliveryFact, ReviewFact, ModerationFact, ReplyFact and
// SuppressionFact.
type Fact interface{ fact() }

// Source is the event a message is about, as the transaction has just
// written it.
type Source struct {
	EventID              string        `db:"-"`
	AccountID            string        `db:"account_id"`
	EventTypeID          string        `db:"event_type_id"`
	ChannelID            string        `db:"channel_id"`
	CustomerReference    string        `db:"customer_reference"`
	InviteStatus         invite.Status `db:"invite_status"`
	InviteReason         invite.Reason `db:"invite_reason"`
	InviteMedium         invite.Medium `db:"invite_medium"`
	ScheduledFor         *time.Time    `db:"scheduled_for"`
	SentAt               *time.Time    `db:"sent_at"`
	ReminderScheduledFor *time.Time    `db:"reminder_scheduled_for"`
	ReminderSentAt       *time.Time    `db:"reminder_sent_at"`
	// Subscribed: an endpoint of the account subscribes to the type asked
	// about, enabled or not.
	Subscribed bool `db:"subscribed"`
}

// SendFact is a change of an invite or of its reminder (invite.Change):
// the send of kind Kind now has status Status.
type SendFact struct {
	Kind   invite.Kind
	Status invite.Status
	Event  Source
}

// DeliveryFact is a mail provider's report of the message of an invite
// or of its reminder (Message): its delivery status now, at the time the
// provider gives.
type DeliveryFact struct {
	Event    Source
	Message  invite.Kind
	Outcome  invite.MailOutcome
	Provider string
	At       time.Time
}

// ReviewOf names the review a message is about and its event.
type ReviewOf struct {
	ReviewID, EventID, EventTypeID, ChannelID string
	// CustomerReference is the event's, "" when it had none or is gone.
	CustomerReference string
}

// ReviewFact is a review stored for the first time or changed, with its
// product reviews.
type ReviewFact struct {
	ReviewOf
	Rating          int // 0: only products were rated
	Comment, Locale string
	Products        []ProductFact
}

// ProductFact is one product review of a review.
type ProductFact struct {
	ID, SKU, GTIN, MPN string
	Rating             int
	Comment            string
}

// ModerationFact is a review's new publication status by a report or a
// decision.
type ModerationFact struct {
	ReviewOf
	Status, PreviousStatus review.Status
	Public                 bool
	Action                 string
	Reason                 review.Reason
	Note, By               string
}

// ReplyFact is the shop's reply set, changed or deleted (Text "").
type ReplyFact struct {
	ReviewOf
	Text                 string
	CreatedAt, UpdatedAt time.Time
	By                   string
}

// SuppressionFact is a new entry of the suppression list; the address
// itself is the customer's contact and is not reported.
type SuppressionFact struct {
	Medium                     invite.Medium
	Reason                     invite.SuppressionReason
	EventID, CustomerReference string
}

func (SendFact) fact()        {}
func (DeliveryFact) fact()    {}
func (ReviewFact) fact()      {}
func (ModerationFact) fact()  {}
func (ReplyFact) fact()       {}
func (SuppressionFact) fact() {}

// sourceSQL reads what a message about an event needs, as the transaction
// has just written it, and whether any endpoint of the account subscribes
// to the type ($2), enabled or not (see EmitTx): most transitions then
// cost this one read and nothing more.
const sourceSQL = `
	SELECT e.account_id, e.event_type_id, e.channel_id, COALESCE(e.customer_reference, '') AS customer_reference,
	       e.invite_status, COALESCE(e.invite_reason, '') AS invite_reason, COALESCE(e.invite_medium, '') AS invite_medium,
	       e.scheduled_for, e.sent_at, e.reminder_scheduled_for, e.reminder_sent_at,
	       EXISTS (SELECT 1 FROM webhook_endpoints w
	               WHERE w.account_id = e.account_id AND $2 = ANY (w.events)) AS subscribed
	FROM events e WHERE e.id = $1`

// emitter is the statement emitting runs inside the hot invite
// transitions, prepared like the invite's own.
type emitter struct {
	source *pg.Stmt
	// preparing is set while source is being prepared in the background.
	preparing atomic.Bool
}

// SourceTx reads the event eventID in tx for a message of type typ.
// Until the statement has been prepared on the pool it runs unprepared
// and has it prepared in the background: preparing it here would hold
// this transaction's connection while waiting for a second one (see
// pg.Stmt.On). sql.ErrNoRows: no such event.
func (s *Store) SourceTx(ctx context.Context, tx *sqlx.Tx, eventID, typ string) (Source, error) {
	src := Source{EventID: eventID}
	e := &s.emit
	if e.source.Ready() {
		err := e.source.Get(ctx, tx, &src, eventID, typ)
		return src, err
	}
	if e.preparing.CompareAndSwap(false, true) {
		go func() {
			defer e.preparing.Store(false)
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			e.source.Prepare(pctx) // on failure the next emit tries again
		}()
	}
	err := tx.GetContext(ctx, &src, sourceSQL, eventID, typ)
	return src, err
}

// ReferenceTx is the customer reference of eventID and whether an
// endpoint of the account subscribes to typ. The event may be gone
// (retention keeps reviews, a suppression outlives its event): then there
// is no reference to add.
func (s *Store) ReferenceTx(ctx context.Context, tx *sqlx.Tx, accountID, eventID, typ string) (ref string, subscribed bool, err error) {
	src, err := s.SourceTx(ctx, tx, eventID, typ)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		subscribed, err = SubscribedTx(ctx, tx, accountID, typ)
		return "", subscribed, err
	case err != nil:
		return "", false, err
	}
	return src.CustomerReference, src.Subscribed, nil
}

// SubscribedTx reports whether an endpoint of the account subscribes to
// typ, enabled or not.
func SubscribedTx(ctx context.Context, tx *sqlx.Tx, accountID, typ string) (subscribed bool, err error) {
	err = tx.GetContext(ctx, &subscribed, `SELECT EXISTS (SELECT 1 FROM webhook_endpoints w
		WHERE w.account_id = $1 AND $2 = ANY (w.events))`, accountID, typ)
	return subscribed, err
}

// EmitTx writes a delivery of the message of type typ about fact for
// every endpoint of the account that subscribes to typ, in tx. The body
// is built once (Messages) and stored: every attempt sends these same
// bytes. A disabled endpoint's delivery is written failed
// (endpoint_disabled) and marked started, so no workflow runs for it; a
// replay once the endpoint is enabled sends it, and nothing that happened
// meanwhile is lost.
func (s *Store) EmitTx(ctx context.Context, tx *sqlx.Tx, accountID, typ string, at time.Time, fact Fact) error {
	if s.Messages == nil {
		return fmt.Errorf("webhook %s: no message builder is wired (webhookdb.Store.Messages)", typ)
	}
	body, err := s.Messages.Body(typ, at, fact)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", typ, err)
	}
	now := s.Now()
	// event_id is the payload's data.eventId, which an erasure looks for.
	_, err = tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, endpoint_id, account_id, type, payload, event_id,
			created_at, next_start_at, status, reason, last_error, started_at)
		SELECT 'msg-' || touchpoint_uuid7($4), w.id, w.account_id, $2, $3, $3::json -> 'data' ->> 'eventId', $4::timestamptz, $4,
		       CASE WHEN w.enabled THEN 'pending' ELSE 'failed' END,
		       CASE WHEN w.enabled THEN NULL ELSE $5 END,
		       CASE WHEN w.enabled THEN NULL ELSE 'endpoint disabled when the change happened' END,
		       CASE WHEN w.enabled THEN NULL ELSE $4 END
		FROM webhook_endpoints w WHERE w.account_id = $1 AND $2 = ANY (w.events)`,
		accountID, typ, string(body), now, ReasonEndpointDisabled)
	if err != nil {
		return fmt.Errorf("emit webhook %s: %w", typ, err)
	}
	return nil
}

// EmitEventTx emits the message of type typ about a change of the event
// eventID after tx has written it, when an endpoint subscribes to it:
// fact builds the message's fact from the event's row.
func (s *Store) EmitEventTx(ctx context.Context, tx *sqlx.Tx, eventID, typ string, at time.Time, fact func(Source) Fact) error {
	src, err := s.SourceTx(ctx, tx, eventID, typ)
	if err != nil || !src.Subscribed {
		return err
	}
	return s.EmitTx(ctx, tx, src.AccountID, typ, at, fact(src))
}

// EmitSendTx writes the deliveries of a change of an invite or a reminder
// (invite.Change.Event) after tx has written it.
func (s *Store) EmitSendTx(ctx context.Context, tx *sqlx.Tx, eventID string, c invite.Change) error {
	if c.Event == "" {
		return nil
	}
	return s.EmitEventTx(ctx, tx, eventID, c.Event, s.Now(), func(src Source) Fact {
		return SendFact{Kind: c.Kind, Status: c.To.Status, Event: src}
	})
}

// The types of the messages the store writes besides those of a send's
// change (invite.EventOf names those): package webhook lists them all.
const (
	InviteDelivered    = "invite.delivered"
	InviteBounced      = "invite.bounced"
	InviteComplained   = "invite.complained"
	ReviewCreated      = "review.created"
	ReviewUpdated      = "review.updated"
	ReviewModerated    = "review.moderated"
	ReviewReplied      = "review.replied"
	SuppressionCreated = "suppression.created"
)
