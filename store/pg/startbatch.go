package pg

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// StartBatch is a set of claimed rows of an outbox table with text ids —
// webhook deliveries, template test sends — whose workflows are due to be
// started. The rows stay locked (so other starters skip them) until Finish
// or Release.
type StartBatch[T any] struct {
	tx     *sqlx.Tx
	now    time.Time
	table  string // the rows' table: started_at, start_attempts, next_start_at, start_error
	what   string // names the rows in errors
	Starts []T
}

// StartRetry is a row whose workflow start failed, and when to try again.
type StartRetry struct {
	ID    string
	After time.Duration
	Error string
}

// ClaimStarts locks up to limit rows of table whose workflow is due to be
// started, skipping rows other starters hold, and reads their columns.
// The caller must Finish or Release the batch.
func ClaimStarts[T any](ctx context.Context, db *DB, table, columns, what string, limit int) (*StartBatch[T], error) {
	tx, err := db.pool.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("claim %s starts: %w", what, Translate(err))
	}
	b := &StartBatch[T]{tx: tx, now: db.Now(), table: table, what: what}
	err = tx.SelectContext(ctx, &b.Starts, `SELECT `+columns+` FROM `+table+`
		WHERE started_at IS NULL AND next_start_at <= $1
		ORDER BY next_start_at, id
		LIMIT $2
		FOR UPDATE SKIP LOCKED`, b.now, limit)
	if err != nil {
		tx.Rollback() // the select error is the one to report
		return nil, fmt.Errorf("claim %s starts: %w", what, Translate(err))
	}
	return b, nil
}

// Finish marks the done rows started, reschedules the failed ones and
// commits, releasing the rows.
func (b *StartBatch[T]) Finish(ctx context.Context, done []string, retries []StartRetry) error {
	if len(done) > 0 {
		if _, err := b.tx.ExecContext(ctx, `UPDATE `+b.table+` SET started_at = $2, start_attempts = start_attempts + 1,
			start_error = NULL WHERE id = ANY($1)`, pq.Array(done), b.now); err != nil {
			b.tx.Rollback() // the update error is the one to report
			return fmt.Errorf("finish %s starts: %w", b.what, Translate(err))
		}
	}
	for _, r := range retries {
		if _, err := b.tx.ExecContext(ctx, `UPDATE `+b.table+` SET start_attempts = start_attempts + 1,
			next_start_at = $2, start_error = $3 WHERE id = $1`, r.ID, b.now.Add(r.After), Truncate(r.Error, 1000)); err != nil {
			b.tx.Rollback() // the update error is the one to report
			return fmt.Errorf("reschedule %s start: %w", b.what, Translate(err))
		}
	}
	return Translate(b.tx.Commit())
}

// Release hands the rows back untouched (shutdown).
func (b *StartBatch[T]) Release() error { return b.tx.Rollback() }
