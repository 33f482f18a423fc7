package store

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// The facts of the changes of reviews that endpoints may subscribe to,
// written with the change (webhookdb.EmitTx).

// reviewOf names r and its event in a message; the event may be gone.
func (s *Store) reviewOf(ctx context.Context, tx *sqlx.Tx, r Review, typ string) (webhookdb.ReviewOf, bool, error) {
	ref, subscribed, err := s.Webhooks.ReferenceTx(ctx, tx, r.AccountID, r.EventID, typ)
	return webhookdb.ReviewOf{ReviewID: r.ID, EventID: r.EventID, EventTypeID: r.EventTypeID, ChannelID: r.ChannelID,
		CustomerReference: ref}, subscribed, err
}

// emitReviewWebhook reports a review stored for the first time
// (review.created) or changed (review.updated), with its product reviews.
func (s *Store) emitReviewWebhook(ctx context.Context, tx *sqlx.Tx, r Review, created bool) error {
	typ := webhookdb.ReviewUpdated
	if created {
		typ = webhookdb.ReviewCreated
	}
	of, subscribed, err := s.reviewOf(ctx, tx, r, typ)
	if err != nil || !subscribed {
		return err
	}
	products := make([]webhookdb.ProductFact, len(r.Products))
	for i, p := range r.Products {
		products[i] = webhookdb.ProductFact{ID: p.ID, SKU: p.SKU, GTIN: p.GTIN, MPN: p.MPN, Rating: p.Rating, Comment: p.Comment}
	}
	return s.Webhooks.EmitTx(ctx, tx, r.AccountID, typ, r.UpdatedAt, webhookdb.ReviewFact{ReviewOf: of,
		Rating: r.Rating, Comment: r.Comment, Locale: r.Locale, Products: products})
}

// emitModerationWebhook reports a review's new publication status
// (review.moderated), from status from, by the change h.
func (s *Store) emitModerationWebhook(ctx context.Context, tx *sqlx.Tx, r Review, from review.Status, h historyEntry) error {
	of, subscribed, err := s.reviewOf(ctx, tx, r, webhookdb.ReviewModerated)
	if err != nil || !subscribed {
		return err
	}
	return s.Webhooks.EmitTx(ctx, tx, r.AccountID, webhookdb.ReviewModerated, h.at, webhookdb.ModerationFact{ReviewOf: of,
		Status: r.Status, PreviousStatus: from, Public: r.Public, Action: h.action, Reason: h.reason, Note: h.note, By: h.actor})
}

// emitReplyWebhook reports the shop's reply set, changed or deleted
// (review.replied) at time at.
func (s *Store) emitReplyWebhook(ctx context.Context, tx *sqlx.Tx, r Review, at time.Time, by string) error {
	of, subscribed, err := s.reviewOf(ctx, tx, r, webhookdb.ReviewReplied)
	if err != nil || !subscribed {
		return err
	}
	f := webhookdb.ReplyFact{ReviewOf: of, Text: r.ReplyText, By: by}
	if r.ReplyCreatedAt != nil {
		f.CreatedAt = *r.ReplyCreatedAt
		if r.ReplyUpdatedAt != nil {
			f.UpdatedAt = *r.ReplyUpdatedAt
		}
	}
	return s.Webhooks.EmitTx(ctx, tx, r.AccountID, webhookdb.ReviewReplied, at, f)
}

// emitErasureCancel reports the invite of eventID moving from status from to
// cancelled by an erasure, after the transaction has written it.
func (s *Store) emitErasureCancel(ctx context.Context, tx *sqlx.Tx, eventID string, from invite.Status) error {
	return s.Webhooks.EmitSendTx(ctx, tx, eventID, invite.Change{Kind: invite.KindInvite,
		Event: invite.EventOf(invite.KindInvite, from, invite.Cancelled)})
}
