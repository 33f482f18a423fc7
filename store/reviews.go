package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Review is a customer's rating of one event, and their comment (SPEC
// §11.2). It holds no customer data: the event does.
type Review struct {
	ID          string    `db:"id"`
	AccountID   string    `db:"account_id"`
	EventID     string    `db:"event_id"`
	EventTypeID string    `db:"event_type_id"`
	ChannelID   string    `db:"channel_id"`
	Rating      int       `db:"rating"`
	Comment     string    `db:"comment"`
	Locale      string    `db:"locale"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}

const reviewColumns = `id, account_id, event_id, event_type_id, channel_id, rating, comment, locale, created_at, updated_at`

// SaveReview stores the review of an event: the first one is created, a
// later one replaces its rating, comment and locale and moves updatedAt
// (one review per event). created reports which it was.
func (s *Store) SaveReview(ctx context.Context, eventID string, rating int, comment, locale string) (r Review, created bool, err error) {
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		now := s.Now()
		var row struct {
			Review
			Created bool `db:"created"`
		}
		// xmax = 0: the row was inserted by this statement, not updated.
		if err := tx.GetContext(ctx, &row, `
			INSERT INTO reviews (id, account_id, event_id, event_type_id, channel_id, rating, comment, locale, created_at, updated_at)
			SELECT $1, account_id, id, event_type_id, channel_id, $3, $4, $5, $6, $6 FROM events WHERE id = $2
			ON CONFLICT (event_id) DO UPDATE SET rating = EXCLUDED.rating, comment = EXCLUDED.comment,
				locale = EXCLUDED.locale, updated_at = EXCLUDED.updated_at
			RETURNING `+reviewColumns+`, (xmax = 0) AS created`,
			NewID("rev"), eventID, rating, comment, locale, now); err != nil {
			return err
		}
		r, created = row.Review, row.Created
		return s.emitReviewWebhook(ctx, tx, r, created)
	})
	if err != nil {
		return Review{}, false, fmt.Errorf("save review: %w", err)
	}
	return r, created, nil
}

// Review returns one review of an account.
func (s *Store) Review(ctx context.Context, accountID, id string) (Review, error) {
	var r Review
	err := s.db.GetContext(ctx, &r, `SELECT `+reviewColumns+` FROM reviews WHERE id = $1 AND account_id = $2`, id, accountID)
	return r, translate(err)
}

// ReviewOfEvent returns the review of an event (ErrNotFound: none yet).
func (s *Store) ReviewOfEvent(ctx context.Context, eventID string) (Review, error) {
	var r Review
	err := s.db.GetContext(ctx, &r, `SELECT `+reviewColumns+` FROM reviews WHERE event_id = $1`, eventID)
	return r, translate(err)
}

// ReviewFilter narrows ListReviews; zero values do not filter.
type ReviewFilter struct {
	EventTypeID, ChannelID string
	Rating, MinRating      int
	CreatedFrom, CreatedTo *time.Time // from inclusive, to exclusive
}

// ListReviews returns a page of the account's reviews, newest first.
func (s *Store) ListReviews(ctx context.Context, accountID string, f ReviewFilter, p Page) ([]Review, *Cursor, error) {
	w := newWhere(accountID)
	if f.EventTypeID != "" {
		w.add("event_type_id = ", f.EventTypeID)
	}
	if f.ChannelID != "" {
		w.add("channel_id = ", f.ChannelID)
	}
	if f.Rating != 0 {
		w.add("rating = ", f.Rating)
	}
	if f.MinRating != 0 {
		w.add("rating >= ", f.MinRating)
	}
	if f.CreatedFrom != nil {
		w.add("created_at >= ", *f.CreatedFrom)
	}
	if f.CreatedTo != nil {
		w.add("created_at < ", *f.CreatedTo)
	}
	var rs []Review
	query, args := w.page(`SELECT `+reviewColumns+` FROM reviews`, p)
	if err := s.db.SelectContext(ctx, &rs, query, args...); err != nil {
		return nil, nil, translate(err)
	}
	rs, next := trim(rs, pageLimit(p), func(r Review) Cursor { return Cursor{r.CreatedAt, r.ID} })
	return rs, next, nil
}
