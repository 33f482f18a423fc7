package reviewdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Who changed a review, in its history: the customer, the operator (the
// admin CLI), or the shop's API client by its id.
const (
	ActorCustomer = string(people.Customer)
	ActorOperator = string(people.Operator)
)

// The actions of a review's history.
const (
	historyCreated      = "created"
	historyUpdated      = "updated"
	historyReported     = "reported"
	historyPublished    = "published"
	historyRemoved      = "removed"
	historyReplied      = "replied"
	historyReplyDeleted = "reply_deleted"
)

// HistoryActions lists the actions a history entry can have.
func HistoryActions() []string {
	return []string{historyCreated, historyUpdated, historyReported, historyPublished, historyRemoved, historyReplied, historyReplyDeleted}
}

// HistoryEntry is one change of a review.
type HistoryEntry struct {
	ID     int64         `db:"id"`
	Action string        `db:"action"` // one of HistoryActions
	Status review.Status `db:"status"` // the review's status after the change
	Reason review.Reason `db:"reason"` // a report's reason, else ""
	Note   string        `db:"note"`   // a report's or a decision's note, else ""
	Actor  string        `db:"actor"`  // ActorCustomer, ActorOperator or an API client's id
	At     time.Time     `db:"at"`
}

// historyEntry is a row to add.
type historyEntry struct {
	reviewID, accountID, eventID, action string
	status                               review.Status
	reason                               review.Reason
	note, actor                          string
	at                                   time.Time
}

// addHistory adds h to the review's history and, when a person, an API
// client or the operator made the change (not the customer), to the
// account's audit trail.
func addHistory(ctx context.Context, tx *sqlx.Tx, h historyEntry) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO review_history (review_id, account_id, event_id, action, status, reason, note, actor, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		h.reviewID, h.accountID, h.eventID, h.action, h.status, nullText(string(h.reason)), nullText(h.note), h.actor, h.at); err != nil {
		return fmt.Errorf("add review history: %w", err)
	}
	action, audited := auditedReviewActions[h.action]
	if a := people.Actor(h.actor); !audited || !(a.IsPerson() || a.IsClient() || a == people.Operator) {
		return nil
	}
	detail := map[string]string{"status": string(h.status)}
	if h.reason != "" {
		detail["reason"] = string(h.reason)
	}
	return persondb.RecordTx(ctx, tx, h.at, persondb.Entry{AccountID: h.accountID, Actor: people.Actor(h.actor), Action: action,
		Target: h.reviewID, Detail: detail})
}

// auditedReviewActions are the review's changes the audit trail records,
// by their action in the review's history.
var auditedReviewActions = map[string]string{
	historyReported:     persondb.AuditReviewReported,
	historyPublished:    persondb.AuditReviewModerated,
	historyRemoved:      persondb.AuditReviewModerated,
	historyReplied:      persondb.AuditReviewReplied,
	historyReplyDeleted: persondb.AuditReviewReplyDeleted,
}

// ReviewHistory returns a page of the changes of a review of the account,
// newest first (pg.ErrNotFound: no such review).
func (s *Store) ReviewHistory(ctx context.Context, accountID, id string, p pg.Page) ([]HistoryEntry, *pg.Cursor, error) {
	var exists bool
	rd := s.Read(ctx)
	if err := rd.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM reviews WHERE id = $1 AND account_id = $2)`,
		id, accountID); err != nil {
		return nil, nil, pg.Translate(err)
	}
	if !exists {
		return nil, nil, pg.ErrNotFound
	}
	args := []any{id}
	cond := "TRUE"
	if p.After != nil {
		n, err := strconv.ParseInt(p.After.ID, 10, 64)
		if err != nil {
			return nil, nil, pg.ErrBadCursor
		}
		cond, args = "(at, id) < ($2, $3)", append(args, p.After.CreatedAt, n)
	}
	var hs []HistoryEntry
	if err := rd.SelectContext(ctx, &hs, `SELECT id, action, status, COALESCE(reason, '') AS reason, COALESCE(note, '') AS note,
			actor, at FROM review_history WHERE review_id = $1 AND `+cond+` ORDER BY at DESC, id DESC LIMIT `+strconv.Itoa(pg.PageLimit(p)+1),
		args...); err != nil {
		return nil, nil, pg.Translate(err)
	}
	hs, next := pg.Trim(hs, pg.PageLimit(p), func(h HistoryEntry) pg.Cursor {
		return pg.Cursor{CreatedAt: h.At, ID: strconv.FormatInt(h.ID, 10)}
	})
	return hs, next, nil
}

// ReportReview records the shop's report of a review of the account (actor:
// the API client's id) and returns the review; changed is false when the
// report changes nothing (review.Moderation.Report says when). A removed
// review, or one the operator has settled, gives review.ErrRemoved or
// review.ErrSettled. A report of personal data hides the review and its
// product reviews at once; any other leaves them public until the
// operator decides.
func (s *Store) ReportReview(ctx context.Context, accountID, id string, reason review.Reason, note, actor string) (Review, bool, error) {
	return s.changeModeration(ctx, "report review", accountID, id,
		func(m review.Moderation) (review.Moderation, bool, error) { return m.Report(reason) },
		historyEntry{action: historyReported, reason: reason, note: note, actor: actor})
}

// ModerateReview records the operator's decision on a review of any
// account and returns the review; changed is false when it was so
// already.
func (s *Store) ModerateReview(ctx context.Context, id string, d review.Decision, note string) (Review, bool, error) {
	if !d.Valid() {
		return Review{}, false, fmt.Errorf("moderate review: unknown decision %q", d)
	}
	action := historyPublished
	if d == review.Remove {
		action = historyRemoved
	}
	decide := func(m review.Moderation) (review.Moderation, bool, error) {
		next, changed := m.Decide(d)
		return next, changed, nil
	}
	return s.changeModeration(ctx, "moderate review", "", id, decide, historyEntry{action: action, note: note, actor: ActorOperator})
}

// changeModeration locks a review of the account ("": of any account),
// moves its publication state by rule and, when the rule changes it,
// writes the change with h (moderate); what names the change in errors.
// It returns the review, and whether it changed.
func (s *Store) changeModeration(ctx context.Context, what, accountID, id string,
	rule func(review.Moderation) (review.Moderation, bool, error), h historyEntry) (Review, bool, error) {
	var r Review
	changed := false
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		old, err := lockReview(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		next, ch, err := rule(old.Moderation())
		if err != nil || !ch {
			r = old
			return err
		}
		changed = true
		r, err = s.moderate(ctx, tx, old, next, h)
		return err
	})
	if err != nil {
		return Review{}, false, fmt.Errorf("%s: %w", what, err)
	}
	if !changed {
		return r, false, s.withProducts(ctx, s.db, []*Review{&r})
	}
	return r, true, nil
}

// moderate writes a review's new publication state, and its product
// reviews' with it; keeps the aggregates; records h; and writes the
// review.moderated webhooks.
func (s *Store) moderate(ctx context.Context, tx *sqlx.Tx, old Review, next review.Moderation, h historyEntry) (Review, error) {
	now := s.Now()
	reportedAt := old.ReportedAt
	switch {
	case next.Status != review.Reported:
		reportedAt = nil
	case reportedAt == nil:
		reportedAt = &now
	}
	if _, err := tx.ExecContext(ctx, `UPDATE reviews SET status = $2, report_reason = $3, reported_at = $4, settled = $5
		WHERE id = $1`, old.ID, next.Status, nullText(string(next.Reason)), reportedAt, next.Settled); err != nil {
		return Review{}, fmt.Errorf("update review status: %w", err)
	}
	products, err := lockProductReviews(ctx, tx, old.ID)
	if err != nil {
		return Review{}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE product_reviews SET status = $2, report_reason = $3 WHERE review_id = $1`,
		old.ID, next.Status, nullText(string(next.Reason))); err != nil {
		return Review{}, fmt.Errorf("update product review status: %w", err)
	}
	public := review.Public(next.Status, next.Reason)
	agg := newAggregateChange(old.AccountID)
	agg.shop = review.Delta(contribution(old.Public, old.Rating), contribution(public, old.Rating))
	for _, p := range products {
		agg.product(p.Product.Keys(), review.Delta(contribution(p.Public, p.Rating), contribution(public, p.Rating)))
	}
	if err := agg.apply(ctx, tx); err != nil {
		return Review{}, err
	}
	h.reviewID, h.accountID, h.eventID, h.status, h.at = old.ID, old.AccountID, old.EventID, next.Status, now
	if err := addHistory(ctx, tx, h); err != nil {
		return Review{}, err
	}
	r, err := reviewIn(ctx, tx, old.ID)
	if err != nil {
		return Review{}, err
	}
	return r, s.emitModerationWebhook(ctx, tx, r, old.Status, h)
}

// ReportedReview is an entry of the operator's queue.
type ReportedReview struct {
	Review
	// Note is the note of the report that made it reported.
	Note string `db:"report_note"`
}

// ReportedReviews is the operator's queue: reviews of every account (or
// of accountID) that await a decision, oldest report first; limit bounds
// how many (1–1000).
func (s *Store) ReportedReviews(ctx context.Context, accountID string, limit int) ([]ReportedReview, error) {
	limit = min(max(limit, 1), 1000)
	var rs []ReportedReview
	err := s.db.SelectContext(ctx, &rs, `SELECT `+reviewColumns+`,
			COALESCE((SELECT h.note FROM review_history h WHERE h.review_id = reviews.id AND h.action = 'reported'
			          ORDER BY h.at DESC, h.id DESC LIMIT 1), '') AS report_note
		FROM reviews WHERE status = 'reported' AND ($1 = '' OR account_id = $1)
		ORDER BY reported_at, id LIMIT `+strconv.Itoa(limit), accountID)
	if err != nil {
		return nil, pg.Translate(err)
	}
	ptrs := make([]*Review, len(rs))
	for i := range rs {
		ptrs[i] = &rs[i].Review
	}
	return rs, s.withProducts(ctx, s.db, ptrs)
}

// ErrNoReply: the review has no reply to delete.
var ErrNoReply = errors.New("the review has no reply")

// SetReply sets the shop's public reply to a review of the account (text
// cleaned and at most review.MaxText characters; actor: the API client's
// id) and returns the review; changed is false when the reply was this
// text already (then nothing is written and nobody told).
func (s *Store) SetReply(ctx context.Context, accountID, id, text, actor string) (Review, bool, error) {
	if text == "" {
		return Review{}, false, errors.New("set reply: empty text")
	}
	return s.changeReply(ctx, accountID, id, text, actor)
}

// DeleteReply deletes the shop's reply to a review of the account
// (ErrNoReply when there is none).
func (s *Store) DeleteReply(ctx context.Context, accountID, id, actor string) error {
	_, _, err := s.changeReply(ctx, accountID, id, "", actor)
	return err
}

// changeReply sets (text) or deletes ("") the reply, records it in the
// history and writes the review.replied webhooks.
func (s *Store) changeReply(ctx context.Context, accountID, id, text, actor string) (Review, bool, error) {
	var r Review
	changed := false
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		old, err := lockReview(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		switch {
		case text == "" && old.ReplyCreatedAt == nil:
			return ErrNoReply
		case text == old.ReplyText:
			r, err = reviewIn(ctx, tx, id)
			return err
		}
		changed = true
		now := s.Now()
		action := historyReplied
		if text == "" {
			action = historyReplyDeleted
			_, err = tx.ExecContext(ctx, `UPDATE reviews SET reply_text = NULL, reply_created_at = NULL, reply_updated_at = NULL
				WHERE id = $1`, id)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE reviews SET reply_text = $2, reply_created_at = COALESCE(reply_created_at, $3),
				reply_updated_at = $3 WHERE id = $1`, id, text, now)
		}
		if err != nil {
			return fmt.Errorf("write reply: %w", err)
		}
		if err := addHistory(ctx, tx, historyEntry{reviewID: id, accountID: old.AccountID, eventID: old.EventID, action: action, status: old.Status,
			actor: actor, at: now}); err != nil {
			return err
		}
		if r, err = reviewIn(ctx, tx, id); err != nil {
			return err
		}
		return s.emitReplyWebhook(ctx, tx, r, now, actor)
	})
	if err != nil {
		return Review{}, false, fmt.Errorf("change reply: %w", err)
	}
	return r, changed, nil
}
