// Package reviewdb keeps the customers' reviews and what is made of them:
// the reviews (reviews) and their product ratings (product_reviews), each
// review's history of changes (review_history), the rating aggregates of
// an account and of its products (review_aggregates, product_aggregates,
// changed in the transaction of every review change, so reading them never
// scans the reviews), and the public reads of the reviews with the
// accounts' publication keys (publication_keys) and versions
// (publication_versions). It is the imperative shell around package
// review's rules: it locks the rows, calls the decision and writes its
// outcome, with the history, the review.* webhook deliveries and the
// funnel's counts of a review in the same transaction.
package reviewdb

import (
	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/statsdb"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// Store is the repository of reviews, their aggregates and their public
// reads.
type Store struct {
	*pg.DB
	db *sqlx.DB
	// webhooks writes the review.* deliveries of each change.
	webhooks *webhookdb.Store
	// stats counts a review in the funnel, last in its transaction,
	// under the event's row lock every counted change takes.
	stats *statsdb.Store
}

// New is the repository on db; webhooks writes the deliveries of review
// changes, and stats counts reviews in the funnel.
func New(db *pg.DB, webhooks *webhookdb.Store, stats *statsdb.Store) *Store {
	return &Store{DB: db, db: db.Pool(), webhooks: webhooks, stats: stats}
}
