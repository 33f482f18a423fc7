package reviewdb

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/pg"
)

// PublicationKey is one of an account's publication keys, which sign the
// proofs of its public reviews. PrivateKey is sealed by package
// publication; the store never sees it in the clear.
type PublicationKey struct {
	KID        string    `db:"kid"`
	AccountID  string    `db:"account_id"`
	Algorithm  string    `db:"algorithm"`
	PrivateKey []byte    `db:"private_key"`
	PublicJWK  string    `db:"public_jwk"` // the JSON Web Key (JSON), public part only
	CreatedAt  time.Time `db:"created_at"`
}

const publicationKeySelect = `SELECT kid, account_id, algorithm, private_key, public_jwk, created_at
	FROM publication_keys WHERE account_id = $1 ORDER BY created_at DESC, kid DESC`

// PublicationKeys returns every publication key of an account, newest
// first.
func (s *Store) PublicationKeys(ctx context.Context, accountID string) ([]PublicationKey, error) {
	ks := []PublicationKey{}
	if err := s.db.SelectContext(ctx, &ks, publicationKeySelect, accountID); err != nil {
		return nil, fmt.Errorf("list publication keys: %w", pg.Translate(err))
	}
	return ks, nil
}

// AddPublicationKey holds the account's publication-key lock while decide
// looks at its stored keys (newest first) and returns a key to add, or
// nil when none is needed; replicas asking at once so agree on one key.
// It returns every key after the change, newest first (pg.ErrNotFound: no
// such account).
func (s *Store) AddPublicationKey(ctx context.Context, accountID string, decide func(existing []PublicationKey) (*PublicationKey, error)) ([]PublicationKey, error) {
	var ks []PublicationKey
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var exists bool
		if err := tx.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM accounts WHERE id = $1)`, accountID); err != nil {
			return err
		}
		if !exists {
			return pg.ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('publication-key:' || $1, 0))`, accountID); err != nil {
			return fmt.Errorf("lock publication keys: %w", err)
		}
		if err := tx.SelectContext(ctx, &ks, publicationKeySelect, accountID); err != nil {
			return fmt.Errorf("list publication keys: %w", err)
		}
		k, err := decide(ks)
		if err != nil || k == nil {
			return err
		}
		k.AccountID = accountID
		if _, err := tx.NamedExecContext(ctx, `INSERT INTO publication_keys (kid, account_id, algorithm, private_key, public_jwk, created_at)
			VALUES (:kid, :account_id, :algorithm, :private_key, :public_jwk, :created_at)`, k); err != nil {
			return fmt.Errorf("insert publication key: %w", err)
		}
		ks = append([]PublicationKey{*k}, ks...)
		return nil
	})
	if err != nil {
		return nil, pg.Translate(err)
	}
	return ks, nil
}

// PublicationVersion is a number that changes whenever anything the
// account shows in public may have changed (kept by triggers: reviews,
// product reviews, branding, publication keys, erased customer names).
// Only equality means anything.
func (s *Store) PublicationVersion(ctx context.Context, accountID string) (int64, error) {
	var v int64
	err := s.Read(ctx).GetContext(ctx, &v, `SELECT COALESCE((SELECT version FROM publication_versions WHERE account_id = $1), 0)`, accountID)
	return v, pg.Translate(err)
}

// PublicReview is a public review with what its proof states of the event
// behind it.
type PublicReview struct {
	Review
	// TransactionDate is the event's transaction date, as the review
	// keeps it.
	TransactionDate *time.Time `db:"transaction_date"`
	// InvitedAt is when the invite was sent; nil when it never was (the
	// link works before).
	InvitedAt *time.Time `db:"invited_at"`
}

// publicReviewColumns are reviewColumns and what the proof states of the
// event, from the review's own copy: a public review reads nothing of its
// event, so dropping the event's month changes none of it.
const publicReviewColumns = reviewColumns + `, transaction_date, invited_at`

// PublicReviewFilter narrows PublicReviews; zero values do not filter.
type PublicReviewFilter struct {
	// Locale keeps the reviews written in this language ("de" also
	// keeps "de_AT").
	Locale    string
	MinRating int
}

// PublicReviews returns a page of the account's public reviews (review.Public)
// with their product reviews, newest first.
func (s *Store) PublicReviews(ctx context.Context, accountID string, f PublicReviewFilter, p pg.Page) ([]PublicReview, *pg.Cursor, error) {
	rs := []PublicReview{}
	rd := s.Read(ctx)
	next, err := pg.SelectPage(ctx, rd, &rs, publicReviewsWhere(accountID, f), publicReviewsFrom, p,
		func(r PublicReview) pg.Cursor { return pg.Cursor{CreatedAt: r.CreatedAt, ID: r.ID} })
	if err != nil {
		return nil, nil, err
	}
	return rs, next, s.publicProducts(ctx, rd, rs)
}

// publicReviewsFrom is what PublicReviews selects from.
const publicReviewsFrom = `SELECT ` + publicReviewColumns + ` FROM reviews`

// publicReviewsWhere is the condition of PublicReviews, whose keyset page
// is read from reviews_public (with a rating, its entries filtered in the
// index), or from reviews_public_language for a language.
func publicReviewsWhere(accountID string, f PublicReviewFilter) *pg.Where {
	w := pg.NewWhere(accountID)
	w.Cond("public")
	if f.Locale != "" {
		// By its language first, the expression of reviews_public_language,
		// then, for a locale with a region, by the locale itself.
		lang, _, region := strings.Cut(f.Locale, "_")
		w.Add("split_part(locale, '_', 1) = ", lang)
		if region {
			n := w.Arg(f.Locale)
			w.Cond("(locale = " + n + " OR starts_with(locale, " + n + " || '_'))")
		}
	}
	if f.MinRating != 0 {
		w.Add("rating >= ", f.MinRating)
	}
	return w
}

// PublicReviewByID returns a public review of any account with its product
// reviews (pg.ErrNotFound: none, or not public).
func (s *Store) PublicReviewByID(ctx context.Context, id string) (PublicReview, error) {
	rs := []PublicReview{}
	rd := s.Read(ctx)
	if err := rd.SelectContext(ctx, &rs, `SELECT `+publicReviewColumns+` FROM reviews WHERE id = $1 AND public`, id); err != nil {
		return PublicReview{}, pg.Translate(err)
	}
	if len(rs) == 0 {
		return PublicReview{}, pg.ErrNotFound
	}
	return rs[0], s.publicProducts(ctx, rd, rs)
}

// publicProducts fills in the product reviews of rs.
func (s *Store) publicProducts(ctx context.Context, q sqlx.QueryerContext, rs []PublicReview) error {
	ptrs := make([]*Review, len(rs))
	for i := range rs {
		ptrs[i] = &rs[i].Review
	}
	return s.withProducts(ctx, q, ptrs)
}

// PublicProductReview is a public product review with the public review it
// belongs to (its author, reply, and what its proof covers).
type PublicProductReview struct {
	ProductReview
	Review PublicReview
}

// PublicProductReviews returns a page of the account's public product
// reviews of the product with key k, newest first, each with its review.
func (s *Store) PublicProductReviews(ctx context.Context, accountID string, k review.ProductKey, p pg.Page) ([]PublicProductReview, *pg.Cursor, error) {
	if !k.Kind.Valid() {
		return nil, nil, fmt.Errorf("product key kind %q: %w", k.Kind, pg.ErrNotFound)
	}
	w := pg.NewWhere(accountID)
	w.Cond("public")
	w.Add(string(k.Kind)+" = ", k.Value)
	ps := []ProductReview{}
	rd := s.Read(ctx)
	next, err := pg.SelectPage(ctx, rd, &ps, w, `SELECT `+productReviewColumns+` FROM product_reviews`, p,
		func(p ProductReview) pg.Cursor { return pg.Cursor{CreatedAt: p.CreatedAt, ID: p.ID} })
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ReviewID
	}
	rs := []PublicReview{}
	if err := rd.SelectContext(ctx, &rs, `SELECT `+publicReviewColumns+` FROM reviews WHERE id = ANY($1) AND public`,
		pq.Array(ids)); err != nil {
		return nil, nil, pg.Translate(err)
	}
	if err := s.publicProducts(ctx, rd, rs); err != nil {
		return nil, nil, err
	}
	byID := make(map[string]PublicReview, len(rs))
	for _, r := range rs {
		byID[r.ID] = r
	}
	out := make([]PublicProductReview, 0, len(ps))
	for _, p := range ps {
		if r, ok := byID[p.ReviewID]; ok { // always, but for a change between the two reads
			out = append(out, PublicProductReview{ProductReview: p, Review: r})
		}
	}
	return out, next, nil
}

// FeedItem is a public product review as a product reviews feed shows it:
// the product review, its review's language, and the names its public
// author is made from (only with the customer's consent).
type FeedItem struct {
	ProductReview
	Locale          string `db:"locale"`
	ShowName        bool   `db:"show_name"`
	AuthorFirstName string `db:"author_first_name"`
	AuthorLastName  string `db:"author_last_name"`
}

// Author is the name the product review is shown under (review.Author).
func (f FeedItem) Author(loc string) string {
	return review.Author(f.ShowName, f.AuthorFirstName, f.AuthorLastName, loc)
}

// EachPublicProductReview calls fn with every public product review of the
// account, newest first, reading them a batch of at most batch rows at a
// time (keyset pages, each its own short query), so memory stays constant
// however many there are and no query stays open while fn writes to a
// slow reader. An error of fn stops it and is returned.
func (s *Store) EachPublicProductReview(ctx context.Context, accountID string, batch int, fn func(FeedItem) error) error {
	var after *pg.Cursor
	items := make([]FeedItem, 0, batch)
	for {
		args := []any{accountID, batch}
		cond := "TRUE"
		if after != nil {
			cond = "(p.created_at, p.id) < ($3, $4)"
			args = append(args, after.CreatedAt, after.ID)
		}
		items = items[:0]
		err := s.Read(ctx).SelectContext(ctx, &items, `SELECT p.id, p.account_id, p.review_id, p.event_id, p.product_index,
				COALESCE(p.name, '') AS name, COALESCE(p.sku, '') AS sku, COALESCE(p.gtin, '') AS gtin, COALESCE(p.mpn, '') AS mpn,
				COALESCE(p.brand, '') AS brand, COALESCE(p.url, '') AS url, COALESCE(p.image_url, '') AS image_url,
				p.rating, p.comment, p.status, COALESCE(p.report_reason, '') AS report_reason, p.public, p.created_at, p.updated_at,
				r.locale, r.show_name,
				CASE WHEN r.show_name THEN COALESCE(r.author_first_name, '') ELSE '' END AS author_first_name,
				CASE WHEN r.show_name THEN COALESCE(r.author_last_name, '') ELSE '' END AS author_last_name
			FROM product_reviews p JOIN reviews r ON r.id = p.review_id
			WHERE p.account_id = $1 AND p.public AND `+cond+`
			ORDER BY p.created_at DESC, p.id DESC LIMIT $2`, args...)
		if err != nil {
			return fmt.Errorf("read public product reviews: %w", pg.Translate(err))
		}
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		if len(items) < batch {
			return nil
		}
		last := items[len(items)-1]
		after = &pg.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
}
