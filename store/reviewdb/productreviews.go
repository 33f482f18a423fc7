package reviewdb

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/pg"
)

// ProductReview is a customer's rating of one product of the event, with
// the product as the event gave it. Its status and report reason are
// always its review's.
type ProductReview struct {
	ID           string `db:"id"`
	AccountID    string `db:"account_id"`
	ReviewID     string `db:"review_id"`
	EventID      string `db:"event_id"`
	ProductIndex int    `db:"product_index"`
	Product
	Rating       int           `db:"rating"`
	Comment      string        `db:"comment"`
	Status       review.Status `db:"status"`
	ReportReason review.Reason `db:"report_reason"`
	Public       bool          `db:"public"`
	CreatedAt    time.Time     `db:"created_at"`
	UpdatedAt    time.Time     `db:"updated_at"`
}

const productReviewColumns = `id, account_id, review_id, event_id, product_index,
	COALESCE(name, '') AS name, COALESCE(sku, '') AS sku, COALESCE(gtin, '') AS gtin, COALESCE(mpn, '') AS mpn,
	COALESCE(brand, '') AS brand, COALESCE(url, '') AS url, COALESCE(image_url, '') AS image_url,
	rating, comment, status, COALESCE(report_reason, '') AS report_reason, public, created_at, updated_at`

// productReviewsOf reads the product reviews of the reviews ids, by review
// and in the event's order.
func productReviewsOf(ctx context.Context, q sqlx.QueryerContext, ids []string) ([]ProductReview, error) {
	ps := []ProductReview{}
	err := sqlx.SelectContext(ctx, q, &ps, `SELECT `+productReviewColumns+` FROM product_reviews
		WHERE review_id = ANY($1) ORDER BY review_id, product_index`, pq.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("read product reviews: %w", err)
	}
	return ps, nil
}

// lockProductReviews reads a review's product reviews in the event's
// order, locked for the transaction.
func lockProductReviews(ctx context.Context, tx *sqlx.Tx, reviewID string) ([]ProductReview, error) {
	ps := []ProductReview{}
	err := tx.SelectContext(ctx, &ps, `SELECT `+productReviewColumns+` FROM product_reviews
		WHERE review_id = $1 ORDER BY product_index FOR UPDATE`, reviewID)
	if err != nil {
		return nil, fmt.Errorf("lock product reviews: %w", err)
	}
	return ps, nil
}

// ProductReview returns one product review of an account.
func (s *Store) ProductReview(ctx context.Context, accountID, id string) (ProductReview, error) {
	var p ProductReview
	err := s.db.GetContext(ctx, &p, `SELECT `+productReviewColumns+` FROM product_reviews WHERE id = $1 AND account_id = $2`,
		id, accountID)
	return p, pg.Translate(err)
}

// ProductReviewFilter narrows ListProductReviews; zero values do not
// filter.
type ProductReviewFilter struct {
	SKU, GTIN, MPN         string
	MinRating              int
	Status                 review.Status
	CreatedFrom, CreatedTo *time.Time // from inclusive, to exclusive
}

// ListProductReviews returns a page of the account's product reviews,
// newest first.
func (s *Store) ListProductReviews(ctx context.Context, accountID string, f ProductReviewFilter, p pg.Page) ([]ProductReview, *pg.Cursor, error) {
	w := pg.NewWhere(accountID)
	if f.SKU != "" {
		w.Add("sku = ", f.SKU)
	}
	if f.GTIN != "" {
		w.Add("gtin = ", f.GTIN)
	}
	if f.MPN != "" {
		w.Add("mpn = ", f.MPN)
	}
	if f.MinRating != 0 {
		w.Add("rating >= ", f.MinRating)
	}
	if f.Status != "" {
		w.Add("status = ", string(f.Status))
	}
	if f.CreatedFrom != nil {
		w.Add("created_at >= ", *f.CreatedFrom)
	}
	if f.CreatedTo != nil {
		w.Add("created_at < ", *f.CreatedTo)
	}
	ps := []ProductReview{}
	next, err := pg.SelectPage(ctx, s.Read(ctx), &ps, w, `SELECT `+productReviewColumns+` FROM product_reviews`, p,
		func(p ProductReview) pg.Cursor { return pg.Cursor{CreatedAt: p.CreatedAt, ID: p.ID} })
	if err != nil {
		return nil, nil, err
	}
	return ps, next, nil
}

// aggregateRow is a row of review_aggregates or product_aggregates.
type aggregateRow struct {
	Count int64 `db:"count"`
	Sum   int64 `db:"sum"`
	R1    int64 `db:"r1"`
	R2    int64 `db:"r2"`
	R3    int64 `db:"r3"`
	R4    int64 `db:"r4"`
	R5    int64 `db:"r5"`
}

func (a aggregateRow) aggregate() review.Aggregate {
	return review.Aggregate{Count: a.Count, Sum: a.Sum, Distribution: [5]int64{a.R1, a.R2, a.R3, a.R4, a.R5}}
}

// ReviewAggregate is the count, sum and distribution of the account's
// public shop ratings: one row read, kept up to date by every change of a
// review.
func (s *Store) ReviewAggregate(ctx context.Context, accountID string) (review.Aggregate, error) {
	var a aggregateRow
	err := s.Read(ctx).GetContext(ctx, &a, `SELECT count, sum, r1, r2, r3, r4, r5 FROM review_aggregates WHERE account_id = $1`, accountID)
	if err := pg.Translate(err); err != nil && err != pg.ErrNotFound {
		return review.Aggregate{}, err
	}
	return a.aggregate(), nil
}

// ProductAggregate is the count, sum and distribution of the account's
// public ratings of the product with key k (none yet: all zero): one row
// read, kept up to date by every change of a product review.
func (s *Store) ProductAggregate(ctx context.Context, accountID string, k review.ProductKey) (review.Aggregate, error) {
	var a aggregateRow
	err := s.Read(ctx).GetContext(ctx, &a, `SELECT count, sum, r1, r2, r3, r4, r5 FROM product_aggregates
		WHERE account_id = $1 AND key_kind = $2 AND key_value = $3`, accountID, string(k.Kind), k.Value)
	if err := pg.Translate(err); err != nil && err != pg.ErrNotFound {
		return review.Aggregate{}, err
	}
	return a.aggregate(), nil
}

// aggregateChange collects what one transaction changes in an account's
// aggregates, to write them at its end in a fixed order (the account's
// row, then the products' by key), so concurrent changes cannot deadlock
// and each row is locked only briefly.
type aggregateChange struct {
	accountID string
	shop      review.Aggregate
	products  map[review.ProductKey]review.Aggregate
}

func newAggregateChange(accountID string) *aggregateChange {
	return &aggregateChange{accountID: accountID, products: map[review.ProductKey]review.Aggregate{}}
}

// product adds d under each of keys.
func (c *aggregateChange) product(keys []review.ProductKey, d review.Aggregate) {
	if d.IsZero() {
		return
	}
	for _, k := range keys {
		c.products[k] = c.products[k].Add(d)
	}
}

// apply adds the changes to the stored rows, each with an UPDATE, or an
// INSERT for a row that is not there yet (an upsert would check the
// table's non-negative constraints against the delta itself).
func (c *aggregateChange) apply(ctx context.Context, tx *sqlx.Tx) error {
	if d := c.shop; !d.IsZero() {
		if err := addAggregate(ctx, tx, "review_aggregates", []string{"account_id"}, []any{c.accountID}, d); err != nil {
			return fmt.Errorf("update review aggregate: %w", err)
		}
	}
	keys := make([]review.ProductKey, 0, len(c.products))
	for k, d := range c.products {
		if !d.IsZero() {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, review.CompareKeys)
	for _, k := range keys {
		if err := addAggregate(ctx, tx, "product_aggregates", []string{"account_id", "key_kind", "key_value"},
			[]any{c.accountID, string(k.Kind), k.Value}, c.products[k]); err != nil {
			return fmt.Errorf("update product aggregate %s %s: %w", k.Kind, strconv.Quote(k.Value), err)
		}
	}
	return nil
}

// addAggregate adds d to the row of table whose key columns have the
// values key.
func addAggregate(ctx context.Context, tx *sqlx.Tx, table string, columns []string, key []any, d review.Aggregate) error {
	values := []any{d.Count, d.Sum, d.Distribution[0], d.Distribution[1], d.Distribution[2], d.Distribution[3], d.Distribution[4]}
	var where []string
	for i, c := range columns {
		where = append(where, c+" = $"+strconv.Itoa(len(values)+i+1))
	}
	res, err := tx.ExecContext(ctx, `UPDATE `+table+` SET count = count + $1, sum = sum + $2,
		r1 = r1 + $3, r2 = r2 + $4, r3 = r3 + $5, r4 = r4 + $6, r5 = r5 + $7 WHERE `+strings.Join(where, " AND "),
		append(values, key...)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	// The first rating under this key: a concurrent first one may insert
	// the row in between, and then this one adds to it.
	_, err = tx.ExecContext(ctx, `INSERT INTO `+table+` AS t (`+strings.Join(columns, ", ")+`, count, sum, r1, r2, r3, r4, r5)
		VALUES (`+placeholders(len(columns)+7)+`) ON CONFLICT (`+strings.Join(columns, ", ")+`) DO UPDATE SET
		count = t.count + EXCLUDED.count, sum = t.sum + EXCLUDED.sum, r1 = t.r1 + EXCLUDED.r1, r2 = t.r2 + EXCLUDED.r2,
		r3 = t.r3 + EXCLUDED.r3, r4 = t.r4 + EXCLUDED.r4, r5 = t.r5 + EXCLUDED.r5`, append(key, values...)...)
	return err
}

// placeholders is "$1, $2, …, $n".
func placeholders(n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = "$" + strconv.Itoa(i+1)
	}
	return strings.Join(ps, ", ")
}
