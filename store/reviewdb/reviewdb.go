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
	"context"

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
	// stats counts a review in the funnel, last in its transaction.
	stats *statsdb.Store
	// lockEvent locks an event's row for a change that is counted, so
	// the facts read after it are the ones the change starts from; the
	// statement is the one every counted change of an event runs.
	lockEvent *pg.Stmt
}

// New is the repository on db; webhooks writes the deliveries of review
// changes, stats counts reviews in the funnel, and lockEvent is the
// prepared statement that locks an event for a counted change.
func New(db *pg.DB, webhooks *webhookdb.Store, stats *statsdb.Store, lockEvent *pg.Stmt) *Store {
	return &Store{DB: db, db: db.Pool(), webhooks: webhooks, stats: stats, lockEvent: lockEvent}
}

// prepareForTx makes the statements that a review's transaction runs
// ready before it begins (see pg.Stmt.On).
func (s *Store) prepareForTx(ctx context.Context) error {
	if err := pg.PrepareAll(ctx, s.lockEvent); err != nil {
		return err
	}
	return s.stats.Prepare(ctx)
}
