package reviewdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Review is a customer's review of one event: their rating of the shop
// and comment, their product ratings (Products), its publication status,
// and the shop's reply. It holds no customer data: the event does, and
// the public author's name is made from it on reading (Author).
type Review struct {
	ID          string `db:"id"`
	AccountID   string `db:"account_id"`
	EventID     string `db:"event_id"`
	EventTypeID string `db:"event_type_id"`
	ChannelID   string `db:"channel_id"`
	// Rating is the shop rating, 1–5; 0 when the customer rated only
	// products.
	Rating  int    `db:"rating"`
	Comment string `db:"comment"`
	Locale  string `db:"locale"`
	// Status and ReportReason are the publication state (review.Public
	// says whether the public may see it; so does Public, from the
	// database's generated column).
	Status       review.Status `db:"status"`
	ReportReason review.Reason `db:"report_reason"`
	ReportedAt   *time.Time    `db:"reported_at"`
	Settled      bool          `db:"settled"`
	Public       bool          `db:"public"`
	// ShowName is the customer's consent to be shown as "Greta Z.".
	ShowName bool `db:"show_name"`
	// The shop's public reply; ReplyText "" and nil times when none.
	ReplyText      string     `db:"reply_text"`
	ReplyCreatedAt *time.Time `db:"reply_created_at"`
	ReplyUpdatedAt *time.Time `db:"reply_updated_at"`
	CreatedAt      time.Time  `db:"created_at"`
	UpdatedAt      time.Time  `db:"updated_at"`
	// Products are the review's product ratings in the event's order.
	Products []ProductReview `db:"-"`
	// AuthorFirstName and AuthorLastName are the customer's names as the
	// event holds them, read only when ShowName is set and the event is
	// still there (erased events hold none), and only for Author: no
	// output shows them as they are.
	AuthorFirstName string `db:"author_first_name"`
	AuthorLastName  string `db:"author_last_name"`
}

// Author is the name the review is shown under in public, with
// "Verified customer" in the reader's language loc when the customer did
// not agree to be named (see review.Author).
func (r Review) Author(loc string) string {
	return review.Author(r.ShowName, r.AuthorFirstName, r.AuthorLastName, loc)
}

// Moderation is the review's publication state, as the rules of package
// review take it.
func (r Review) Moderation() review.Moderation {
	return review.Moderation{Status: r.Status, Reason: r.ReportReason, Settled: r.Settled}
}

// reviewColumns select a review of the table reviews (unaliased). The
// customer's names are read only with the consent to show them (and are
// kept only with it).
const reviewColumns = `id, account_id, event_id, event_type_id, channel_id, COALESCE(rating, 0) AS rating, comment, locale,
	status, COALESCE(report_reason, '') AS report_reason, reported_at, settled, public, show_name,
	COALESCE(reply_text, '') AS reply_text, reply_created_at, reply_updated_at, created_at, updated_at,
	CASE WHEN show_name THEN COALESCE(author_first_name, '') ELSE '' END AS author_first_name,
	CASE WHEN show_name THEN COALESCE(author_last_name, '') ELSE '' END AS author_last_name`

// Product is a product as the event gave it; "" for what it did not give.
type Product struct {
	Name     string `db:"name" json:"name"`
	SKU      string `db:"sku" json:"sku"`
	GTIN     string `db:"gtin" json:"gtin"`
	MPN      string `db:"mpn" json:"mpn"`
	Brand    string `db:"brand" json:"brand"`
	URL      string `db:"url" json:"url"`
	ImageURL string `db:"image_url" json:"imageUrl"`
}

// Keys are the keys the product counts under in the product aggregates.
func (p Product) Keys() []review.ProductKey { return review.Keys(p.SKU, p.GTIN, p.MPN) }

// ReviewInput is what a customer posts from the feedback page.
type ReviewInput struct {
	EventID string
	// Rating is the shop rating, 1–5, or 0 for none; a review needs it
	// or at least one product rating.
	Rating   int
	Comment  string // cleaned (text.Multiline)
	Locale   string
	ShowName bool
	// Products are the product ratings, at most one per Index (the
	// product's place in the event's products, below
	// review.MaxProducts). A posted review replaces the one before it
	// whole: a product rated before and not now loses its rating.
	Products []ProductRating
}

// ProductRating is the rating and comment of the event's product Index.
type ProductRating struct {
	Index   int
	Rating  int
	Comment string // cleaned
}

// ErrProductIndex: a product rating names a product the event does not
// have, or one beyond review.MaxProducts.
var ErrProductIndex = errors.New("no such product in the event")

// ErrNothingRated: a review needs a shop rating or a product rating.
var ErrNothingRated = errors.New("a review needs a rating of the shop or of a product")

// Saved says what SaveReview did.
type Saved int

const (
	// SavedUnchanged: the review was already exactly so; nothing was
	// written and nobody is told.
	SavedUnchanged Saved = iota
	SavedCreated
	SavedUpdated
)

// SaveReview stores the review of an event (one per event): the first one
// is created, a later one replaces the rating, comment, consent and
// product ratings and moves updatedAt. A post identical to the stored
// review changes nothing: no write, no webhook (SavedUnchanged). In the
// same transaction it keeps the aggregates, records the change in the
// review's history and writes the review.created or review.updated
// webhooks. A changed review keeps its publication status, but one the
// operator had published after a report can be reported again.
func (s *Store) SaveReview(ctx context.Context, in ReviewInput) (Review, Saved, error) {
	if in.Rating == 0 && len(in.Products) == 0 {
		return Review{}, SavedUnchanged, ErrNothingRated
	}
	// The statements the transaction runs are made ready before it
	// begins (see pg.Stmt.On).
	if err := s.stats.Prepare(ctx); err != nil {
		return Review{}, SavedUnchanged, fmt.Errorf("save review: %w", pg.Translate(err))
	}
	var r Review
	saved := SavedUnchanged
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var err error
		r, saved, err = s.saveReview(ctx, tx, in)
		return err
	})
	if err != nil {
		return Review{}, SavedUnchanged, fmt.Errorf("save review: %w", err)
	}
	return r, saved, nil
}

func (s *Store) saveReview(ctx context.Context, tx *sqlx.Tx, in ReviewInput) (Review, Saved, error) {
	// The event's row lock orders two first posts of one event, so the
	// funnel counts its review once.
	if err := s.stats.LockEventTx(ctx, tx, in.EventID); err != nil {
		return Review{}, 0, err
	}
	counted, err := s.stats.FactsTx(ctx, tx, in.EventID)
	if err != nil {
		return Review{}, 0, err
	}
	// The review keeps what its public page and proof show of the event
	// (reviewColumns), so that they outlive the event's month.
	var ev struct {
		AccountID       string     `db:"account_id"`
		EventTypeID     string     `db:"event_type_id"`
		ChannelID       string     `db:"channel_id"`
		Products        []byte     `db:"products"`
		TransactionDate time.Time  `db:"transaction_date"`
		SentAt          *time.Time `db:"sent_at"`
		FirstName       *string    `db:"first_name"`
		LastName        *string    `db:"last_name"`
	}
	if err := tx.GetContext(ctx, &ev, `SELECT account_id, event_type_id, channel_id, payload -> 'products' AS products,
			transaction_date, sent_at, payload #>> '{customer,firstName}' AS first_name, payload #>> '{customer,lastName}' AS last_name
		FROM events WHERE id = $1`, in.EventID); err != nil {
		return Review{}, 0, err
	}
	var products []Product
	if ev.Products != nil {
		if err := json.Unmarshal(ev.Products, &products); err != nil {
			return Review{}, 0, fmt.Errorf("event %s: decode products: %w", in.EventID, err)
		}
	}
	want := slices.Clone(in.Products)
	slices.SortFunc(want, func(a, b ProductRating) int { return a.Index - b.Index })
	for i, p := range want {
		if p.Index < 0 || p.Index >= min(len(products), review.MaxProducts) || (i > 0 && want[i-1].Index == p.Index) {
			return Review{}, 0, ErrProductIndex
		}
	}

	// The names the public author is made from are kept only with the
	// customer's consent to be named.
	firstName, lastName := ev.FirstName, ev.LastName
	if !in.ShowName {
		firstName, lastName = nil, nil
	}
	now := s.Now()
	old, err := lockReviewOfEvent(ctx, tx, in.EventID)
	created := errors.Is(err, pg.ErrNotFound)
	switch {
	case created:
		var id string
		err = tx.GetContext(ctx, &id, `INSERT INTO reviews (id, account_id, event_id, event_type_id, channel_id, rating, comment, locale,
				show_name, created_at, updated_at, transaction_date, invited_at, author_first_name, author_last_name)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13, $14) ON CONFLICT (event_id) DO NOTHING RETURNING id`,
			pg.NewID("rev"), ev.AccountID, in.EventID, ev.EventTypeID, ev.ChannelID, nullRating(in.Rating), in.Comment, in.Locale,
			in.ShowName, now, ev.TransactionDate, ev.SentAt, firstName, lastName)
		if errors.Is(err, sql.ErrNoRows) {
			// Another post of the same event created it first: this one
			// replaces it, as any later post would.
			created = false
			old, err = lockReviewOfEvent(ctx, tx, in.EventID)
		} else if err == nil {
			old = Review{ID: id, AccountID: ev.AccountID, EventID: in.EventID, EventTypeID: ev.EventTypeID, ChannelID: ev.ChannelID,
				Status: review.Published, Public: true, CreatedAt: now, UpdatedAt: now}
		}
	}
	if err != nil {
		return Review{}, 0, err
	}
	oldProducts, err := lockProductReviews(ctx, tx, old.ID)
	if err != nil {
		return Review{}, 0, err
	}
	if !created && sameReview(old, oldProducts, in, want) {
		old.Products = oldProducts
		return old, SavedUnchanged, nil
	}

	moderation := old.Moderation().Edited()
	public := review.Public(moderation.Status, moderation.Reason)
	if !created {
		if _, err := tx.ExecContext(ctx, `UPDATE reviews SET rating = $2, comment = $3, locale = $4, show_name = $5,
				settled = $6, updated_at = $7, author_first_name = $8, author_last_name = $9 WHERE id = $1`,
			old.ID, nullRating(in.Rating), in.Comment, in.Locale, in.ShowName, moderation.Settled, now, firstName, lastName); err != nil {
			return Review{}, 0, fmt.Errorf("update review: %w", err)
		}
	}
	agg := newAggregateChange(ev.AccountID)
	agg.shop = review.Delta(contribution(old.Public, old.Rating), contribution(public, in.Rating))
	if err := s.replaceProductReviews(ctx, tx, old, ev.AccountID, products, oldProducts, want, public, now, agg); err != nil {
		return Review{}, 0, err
	}
	if err := agg.apply(ctx, tx); err != nil {
		return Review{}, 0, err
	}
	action, saved := historyUpdated, SavedUpdated
	if created {
		action, saved = historyCreated, SavedCreated
	}
	if err := addHistory(ctx, tx, historyEntry{reviewID: old.ID, accountID: ev.AccountID, eventID: in.EventID, action: action,
		status: moderation.Status, actor: ActorCustomer, at: now}); err != nil {
		return Review{}, 0, err
	}
	r, err := reviewIn(ctx, tx, old.ID)
	if err != nil {
		return Review{}, 0, err
	}
	if err := s.emitReviewWebhook(ctx, tx, r, created); err != nil {
		return Review{}, 0, err
	}
	return r, saved, s.countReview(ctx, tx, counted, in.Rating)
}

// countReview counts a review of rating (0: none) on the event whose
// facts were before, last in its transaction: reviewed, rated, and opened
// (a review means the page was opened, which is recorded when it was not).
func (s *Store) countReview(ctx context.Context, tx *sqlx.Tx, before stats.Facts, rating int) error {
	after := before
	after.Reviewed, after.Rating, after.Opened = true, rating, true
	if !before.Opened {
		if _, err := tx.ExecContext(ctx, `UPDATE events SET opened_at = $2 WHERE id = $1 AND opened_at IS NULL`,
			before.EventID, s.Now()); err != nil {
			return fmt.Errorf("mark opened: %w", err)
		}
	}
	return s.stats.AddTx(ctx, tx, stats.Delta(&before, after))
}

// replaceProductReviews makes the review's product reviews those of want
// (sorted by index): new ones inserted with the review's status, changed
// ones updated, those no longer rated deleted; each change goes into agg.
func (s *Store) replaceProductReviews(ctx context.Context, tx *sqlx.Tx, rev Review, accountID string, products []Product,
	old []ProductReview, want []ProductRating, public bool, now time.Time, agg *aggregateChange) error {
	byIndex := map[int]ProductReview{}
	for _, p := range old {
		byIndex[p.ProductIndex] = p
	}
	for _, w := range want {
		p, had := byIndex[w.Index]
		delete(byIndex, w.Index)
		switch {
		case !had:
			prod := products[w.Index]
			if _, err := tx.ExecContext(ctx, `INSERT INTO product_reviews (id, account_id, review_id, event_id, product_index,
					name, sku, gtin, mpn, brand, url, image_url, rating, comment, status, report_reason, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17)`,
				pg.NewID("prv"), accountID, rev.ID, rev.EventID, w.Index,
				nullText(prod.Name), nullText(prod.SKU), nullText(prod.GTIN), nullText(prod.MPN), nullText(prod.Brand),
				nullText(prod.URL), nullText(prod.ImageURL), w.Rating, w.Comment, rev.Status, nullText(string(rev.ReportReason)), now); err != nil {
				return fmt.Errorf("insert product review: %w", err)
			}
			agg.product(prod.Keys(), review.Delta(review.Contribution{}, contribution(public, w.Rating)))
		case p.Rating != w.Rating || p.Comment != w.Comment:
			if _, err := tx.ExecContext(ctx, `UPDATE product_reviews SET rating = $2, comment = $3, updated_at = $4 WHERE id = $1`,
				p.ID, w.Rating, w.Comment, now); err != nil {
				return fmt.Errorf("update product review: %w", err)
			}
			agg.product(p.Product.Keys(), review.Delta(contribution(p.Public, p.Rating), contribution(public, w.Rating)))
		}
	}
	var gone []string
	for _, p := range byIndex {
		gone = append(gone, p.ID)
		agg.product(p.Product.Keys(), review.Delta(contribution(p.Public, p.Rating), review.Contribution{}))
	}
	if len(gone) > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM product_reviews WHERE id = ANY($1)`, pq.Array(gone)); err != nil {
			return fmt.Errorf("delete product reviews: %w", err)
		}
	}
	return nil
}

// sameReview reports whether the post in (with its product ratings
// sorted, want) says exactly what the stored review does.
func sameReview(old Review, oldProducts []ProductReview, in ReviewInput, want []ProductRating) bool {
	if old.Rating != in.Rating || old.Comment != in.Comment || old.Locale != in.Locale || old.ShowName != in.ShowName ||
		len(oldProducts) != len(want) {
		return false
	}
	for i, p := range oldProducts { // both in index order
		if p.ProductIndex != want[i].Index || p.Rating != want[i].Rating || p.Comment != want[i].Comment {
			return false
		}
	}
	return true
}

func contribution(public bool, rating int) review.Contribution {
	return review.Contribution{Public: public, Rating: rating}
}

// nullRating stores "no shop rating" as NULL.
func nullRating(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

// nullText stores "" as NULL.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// lockReviewOfEvent reads the review of an event, locked for the
// transaction (pg.ErrNotFound: none yet).
func lockReviewOfEvent(ctx context.Context, tx *sqlx.Tx, eventID string) (Review, error) {
	var r Review
	err := tx.GetContext(ctx, &r, `SELECT `+reviewColumns+` FROM reviews WHERE event_id = $1 FOR UPDATE`, eventID)
	return r, pg.Translate(err)
}

// lockReview reads a review of an account, locked for the transaction;
// accountID "" reads any account's (the operator's commands).
func lockReview(ctx context.Context, tx *sqlx.Tx, accountID, id string) (Review, error) {
	var r Review
	err := tx.GetContext(ctx, &r, `SELECT `+reviewColumns+` FROM reviews WHERE id = $1 AND ($2 = '' OR account_id = $2) FOR UPDATE`,
		id, accountID)
	return r, pg.Translate(err)
}

// reviewIn reads a review with its products in tx.
func reviewIn(ctx context.Context, tx *sqlx.Tx, id string) (Review, error) {
	var r Review
	if err := tx.GetContext(ctx, &r, `SELECT `+reviewColumns+` FROM reviews WHERE id = $1`, id); err != nil {
		return Review{}, err
	}
	var err error
	r.Products, err = productReviewsOf(ctx, tx, []string{id})
	return r, err
}

// Review returns one review of an account, with its product reviews.
func (s *Store) Review(ctx context.Context, accountID, id string) (Review, error) {
	var r Review
	if err := s.db.GetContext(ctx, &r, `SELECT `+reviewColumns+` FROM reviews WHERE id = $1 AND account_id = $2`, id, accountID); err != nil {
		return Review{}, pg.Translate(err)
	}
	return r, s.withProducts(ctx, s.db, []*Review{&r})
}

// ReviewOfEvent returns the review of an event with its product reviews
// (pg.ErrNotFound: none yet).
func (s *Store) ReviewOfEvent(ctx context.Context, eventID string) (Review, error) {
	var r Review
	if err := s.db.GetContext(ctx, &r, `SELECT `+reviewColumns+` FROM reviews WHERE event_id = $1`, eventID); err != nil {
		return Review{}, pg.Translate(err)
	}
	return r, s.withProducts(ctx, s.db, []*Review{&r})
}

// ReviewFilter narrows ListReviews; zero values do not filter.
type ReviewFilter struct {
	EventTypeID, ChannelID       string
	Rating, MinRating, MaxRating int
	Status                       review.Status
	CreatedFrom, CreatedTo       *time.Time // from inclusive, to exclusive
	// Answered keeps the reviews with a reply (true) or without one
	// (false); nil keeps both.
	Answered *bool
	// Product keeps the reviews that rate a product whose sku, gtin or
	// mpn it is.
	Product string
}

// ListReviews returns a page of the account's reviews, newest first, with
// their product reviews.
func (s *Store) ListReviews(ctx context.Context, accountID string, f ReviewFilter, p pg.Page) ([]Review, *pg.Cursor, error) {
	w := pg.NewWhere(accountID)
	if f.EventTypeID != "" {
		w.Add("event_type_id = ", f.EventTypeID)
	}
	if f.ChannelID != "" {
		w.Add("channel_id = ", f.ChannelID)
	}
	if f.Rating != 0 {
		w.Add("rating = ", f.Rating)
	}
	if f.MinRating != 0 {
		w.Add("rating >= ", f.MinRating)
	}
	if f.MaxRating != 0 {
		w.Add("rating <= ", f.MaxRating)
	}
	if f.Status != "" {
		w.Add("status = ", string(f.Status))
	}
	switch {
	case f.Answered == nil:
	case *f.Answered: // reviews_answered
		w.Cond("reply_text IS NOT NULL")
	default: // reviews_unanswered
		w.Cond("reply_text IS NULL")
	}
	if f.Product != "" {
		// The product reviews of one product are few beside the
		// account's reviews: read them by the sku, gtin and mpn indexes.
		v := w.Arg(f.Product)
		w.Cond(`id IN (SELECT review_id FROM product_reviews WHERE account_id = $1 AND (sku = ` + v + ` OR gtin = ` + v + ` OR mpn = ` + v + `))`)
	}
	if f.CreatedFrom != nil {
		w.Add("created_at >= ", *f.CreatedFrom)
	}
	if f.CreatedTo != nil {
		w.Add("created_at < ", *f.CreatedTo)
	}
	var rs []Review
	rd := s.Read(ctx)
	next, err := pg.SelectPage(ctx, rd, &rs, w, `SELECT `+reviewColumns+` FROM reviews`, p,
		func(r Review) pg.Cursor { return pg.Cursor{CreatedAt: r.CreatedAt, ID: r.ID} })
	if err != nil {
		return nil, nil, err
	}
	ptrs := make([]*Review, len(rs))
	for i := range rs {
		ptrs[i] = &rs[i]
	}
	return rs, next, s.withProducts(ctx, rd, ptrs)
}

// withProducts fills in the product reviews of rs in one query.
func (s *Store) withProducts(ctx context.Context, q sqlx.QueryerContext, rs []*Review) error {
	if len(rs) == 0 {
		return nil
	}
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
	}
	ps, err := productReviewsOf(ctx, q, ids)
	if err != nil {
		return err
	}
	for _, r := range rs {
		r.Products = []ProductReview{}
		for _, p := range ps {
			if p.ReviewID == r.ID {
				r.Products = append(r.Products, p)
			}
		}
	}
	return nil
}

// AttentionCap bounds the counts of ReviewAttention: beyond it the
// console says "1000+", and counting never walks more of the index.
const AttentionCap = 1000

// ReviewAttention is what of an account's reviews waits on the shop.
type ReviewAttention struct {
	// Reported counts the reviews reported and not yet decided, at most
	// AttentionCap.
	Reported int64 `db:"reported"`
	// LowUnanswered counts the reviews rated at most maxRating that have
	// no reply, at most AttentionCap.
	LowUnanswered int64 `db:"low_unanswered"`
}

// ReviewAttention counts the account's reported reviews and its reviews
// rated at most maxRating without a reply (a removed one waits on no
// one), each up to AttentionCap, from the reviews_by_status and
// reviews_unanswered indexes.
func (s *Store) ReviewAttention(ctx context.Context, accountID string, maxRating int) (ReviewAttention, error) {
	var a ReviewAttention
	err := s.db.GetContext(ctx, &a, `SELECT
		(SELECT count(*) FROM (SELECT 1 FROM reviews WHERE account_id = $1 AND status = 'reported' LIMIT $3) r) AS reported,
		(SELECT count(*) FROM (SELECT 1 FROM reviews WHERE account_id = $1 AND reply_text IS NULL AND rating <= $2
		                         AND status <> 'removed' LIMIT $3) l) AS low_unanswered`,
		accountID, maxRating, AttentionCap)
	if err != nil {
		return ReviewAttention{}, fmt.Errorf("review attention: %w", pg.Translate(err))
	}
	return a, nil
}
