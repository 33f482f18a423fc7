package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/webhook"
)

// Emitting webhooks is an outbox write: each state change
// that an endpoint may subscribe to inserts its delivery rows in the
// transaction that makes the change, so the change cannot commit without
// them, nor they without it. The emit functions below are called at the
// point of each write (apply, SaveReview, moderate, changeReply,
// addSuppression); payloads are built from the event row's IDs, statuses
// and customer reference, never from its customer data.

// webhookStatements are the statements emitting runs inside the hot
// invite transitions, prepared like the invite's own.
type webhookStatements struct {
	source preparedStmt
	// preparing is set while source is being prepared in the background.
	preparing atomic.Bool
}

func newWebhookStatements() *webhookStatements {
	return &webhookStatements{source: preparedStmt{query: webhookSourceSQL}}
}

// webhookSourceSQL reads what a payload about an event needs, as the
// transaction has just written it, and whether any endpoint of the account
// subscribes to the type ($2), enabled or not (see emitWebhooks): most
// transitions then cost this one read and nothing more.
const webhookSourceSQL = `
	SELECT e.account_id, e.event_type_id, e.channel_id, COALESCE(e.customer_reference, '') AS customer_reference,
	       e.invite_status, COALESCE(e.invite_reason, '') AS invite_reason, COALESCE(e.invite_medium, '') AS invite_medium,
	       e.scheduled_for, e.sent_at, e.reminder_scheduled_for, e.reminder_sent_at,
	       EXISTS (SELECT 1 FROM webhook_endpoints w
	               WHERE w.account_id = e.account_id AND $2 = ANY (w.events)) AS subscribed
	FROM events e WHERE e.id = $1`

// webhookSource is a row of webhookSourceSQL.
type webhookSource struct {
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
	Subscribed           bool          `db:"subscribed"`
}

// loadWebhookSource runs webhookSourceSQL in tx. Until the statement has
// been prepared on the pool it runs unprepared and has it prepared in the
// background: preparing it here would hold this transaction's connection
// while waiting for a second one (see preparedStmt.on).
func (s *Store) loadWebhookSource(ctx context.Context, tx *sqlx.Tx, eventID, eventType string) (webhookSource, error) {
	var src webhookSource
	w := s.webhooks
	if w.source.stmt.Load() != nil {
		err := s.getPrepared(ctx, tx, &w.source, &src, eventID, eventType)
		return src, err
	}
	if w.preparing.CompareAndSwap(false, true) {
		go func() {
			defer w.preparing.Store(false)
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			w.source.get(pctx, s.db) // on failure the next emit tries again
		}()
	}
	err := tx.GetContext(ctx, &src, webhookSourceSQL, eventID, eventType)
	return src, err
}

// emitWebhooks writes a delivery of msg for every endpoint of the account
// that subscribes to msg.Type, in tx. The body is marshalled once and
// stored: every attempt sends these same bytes. A disabled endpoint's
// delivery is written failed (endpoint_disabled) and marked started, so
// no workflow runs for it; a replay once the endpoint is enabled sends
// it, and nothing that happened meanwhile is lost.
func (s *Store) emitWebhooks(ctx context.Context, tx *sqlx.Tx, accountID string, msg webhook.Message) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", msg.Type, err)
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
		accountID, msg.Type, string(body), now, ReasonEndpointDisabled)
	if err != nil {
		return fmt.Errorf("emit webhook %s: %w", msg.Type, err)
	}
	return nil
}

// emitSendWebhook writes the webhook deliveries of a change of an
// invite or a reminder (invite.Change.Event), after the transaction has
// written it.
func (s *Store) emitSendWebhook(ctx context.Context, tx *sqlx.Tx, eventID string, c invite.Change) error {
	if c.Event == "" {
		return nil
	}
	src, err := s.loadWebhookSource(ctx, tx, eventID, c.Event)
	if err != nil || !src.Subscribed {
		return err
	}
	var data webhook.Payload = webhook.InviteData{
		EventID: eventID, EventTypeID: src.EventTypeID, ChannelID: src.ChannelID, CustomerReference: src.CustomerReference,
		Status: string(src.InviteStatus), Reason: string(src.InviteReason), Medium: string(src.InviteMedium),
		ScheduledFor: timeOf(src.ScheduledFor), SentAt: timeOf(src.SentAt),
	}
	if c.Kind == invite.KindReminder {
		data = webhook.ReminderData{
			EventID: eventID, EventTypeID: src.EventTypeID, ChannelID: src.ChannelID, CustomerReference: src.CustomerReference,
			Status: string(c.To.Status), Medium: string(src.InviteMedium),
			ScheduledFor: timeOf(src.ReminderScheduledFor), SentAt: timeOf(src.ReminderSentAt),
		}
	}
	return s.emitWebhooks(ctx, tx, src.AccountID, webhook.Message{Type: c.Event, Timestamp: s.Now(), Data: data})
}

// emitInviteWebhook reports the invite of eventID moving from one status
// to another outside the send's steps (the erasure of a customer), after
// the transaction has written it.
func (s *Store) emitInviteWebhook(ctx context.Context, tx *sqlx.Tx, eventID string, from, to invite.Status) error {
	return s.emitSendWebhook(ctx, tx, eventID, invite.Change{Kind: invite.KindInvite, Event: invite.EventOf(invite.KindInvite, from, to)})
}

// emitReviewWebhook reports a review stored for the first time
// (review.created) or changed (review.updated), with its product reviews.
func (s *Store) emitReviewWebhook(ctx context.Context, tx *sqlx.Tx, r Review, created bool) error {
	typ := webhook.ReviewUpdated
	if created {
		typ = webhook.ReviewCreated
	}
	src, err := s.loadWebhookSource(ctx, tx, r.EventID, typ)
	if err != nil || !src.Subscribed {
		return err
	}
	products := make([]webhook.ProductRating, len(r.Products))
	for i, p := range r.Products {
		products[i] = webhook.ProductRating{ID: p.ID, SKU: p.SKU, GTIN: p.GTIN, MPN: p.MPN, Rating: p.Rating, Comment: p.Comment}
	}
	return s.emitWebhooks(ctx, tx, r.AccountID, webhook.Message{Type: typ, Timestamp: r.UpdatedAt, Data: webhook.ReviewData{
		ReviewID: r.ID, EventID: r.EventID, EventTypeID: r.EventTypeID, ChannelID: r.ChannelID,
		CustomerReference: src.CustomerReference, Rating: r.Rating, Comment: r.Comment, Locale: r.Locale, Products: products,
	}})
}

// reviewReference is the customer reference of a review's event, and
// whether an endpoint of the account subscribes to typ. The event may be
// gone (retention keeps reviews): then there is no reference to add.
func (s *Store) reviewReference(ctx context.Context, tx *sqlx.Tx, r Review, typ string) (ref string, subscribed bool, err error) {
	src, err := s.loadWebhookSource(ctx, tx, r.EventID, typ)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		err = tx.GetContext(ctx, &subscribed, `SELECT EXISTS (SELECT 1 FROM webhook_endpoints w
			WHERE w.account_id = $1 AND $2 = ANY (w.events))`, r.AccountID, typ)
		return "", subscribed, err
	case err != nil:
		return "", false, err
	}
	return src.CustomerReference, src.Subscribed, nil
}

// emitModerationWebhook reports a review's new publication status
// (review.moderated), from status from, by the change h.
func (s *Store) emitModerationWebhook(ctx context.Context, tx *sqlx.Tx, r Review, from review.Status, h historyEntry) error {
	ref, subscribed, err := s.reviewReference(ctx, tx, r, webhook.ReviewModerated)
	if err != nil || !subscribed {
		return err
	}
	return s.emitWebhooks(ctx, tx, r.AccountID, webhook.Message{Type: webhook.ReviewModerated, Timestamp: h.at, Data: webhook.ModerationData{
		ReviewID: r.ID, EventID: r.EventID, EventTypeID: r.EventTypeID, ChannelID: r.ChannelID, CustomerReference: ref,
		Status: string(r.Status), PreviousStatus: string(from), Public: r.Public, Action: h.action,
		Reason: string(h.reason), Note: h.note, By: h.actor,
	}})
}

// emitReplyWebhook reports the shop's reply set, changed or deleted
// (review.replied) at time at.
func (s *Store) emitReplyWebhook(ctx context.Context, tx *sqlx.Tx, r Review, at time.Time, by string) error {
	ref, subscribed, err := s.reviewReference(ctx, tx, r, webhook.ReviewReplied)
	if err != nil || !subscribed {
		return err
	}
	d := webhook.ReplyData{ReviewID: r.ID, EventID: r.EventID, EventTypeID: r.EventTypeID, ChannelID: r.ChannelID,
		CustomerReference: ref, Text: r.ReplyText, By: by}
	if r.ReplyCreatedAt != nil {
		d.CreatedAt, d.UpdatedAt = *r.ReplyCreatedAt, timeOf(r.ReplyUpdatedAt)
	}
	return s.emitWebhooks(ctx, tx, r.AccountID, webhook.Message{Type: webhook.ReviewReplied, Timestamp: at, Data: d})
}

// emitSuppressionWebhook reports a new entry of the suppression list. The
// address itself is the customer's contact and is not sent; when the
// entry came from an event (an unsubscribe link, a bounce), its ID and
// customer reference let the shop find the customer.
func (s *Store) emitSuppressionWebhook(ctx context.Context, tx *sqlx.Tx, sup Suppression) error {
	data := webhook.SuppressionData{Medium: string(sup.Medium), Reason: string(sup.Reason)}
	if sup.EventID != nil {
		data.EventID = *sup.EventID
		src, err := s.loadWebhookSource(ctx, tx, *sup.EventID, webhook.SuppressionCreated)
		switch {
		case errors.Is(err, sql.ErrNoRows): // the event is gone: no reference to add
		case err != nil:
			return err
		case !src.Subscribed:
			return nil
		default:
			data.CustomerReference = src.CustomerReference
		}
	}
	return s.emitWebhooks(ctx, tx, sup.AccountID, webhook.Message{Type: webhook.SuppressionCreated, Timestamp: sup.CreatedAt, Data: data})
}

func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
