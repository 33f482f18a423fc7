package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// WebhookStart is a delivery whose workflow has not been started yet.
type WebhookStart struct {
	ID            string    `db:"id"`
	EndpointID    string    `db:"endpoint_id"`
	AccountID     string    `db:"account_id"`
	Type          string    `db:"type"`
	Status        string    `db:"status"`
	StartAttempts int       `db:"start_attempts"`
	CreatedAt     time.Time `db:"created_at"`
	// Replays counts the replays of a failed delivery; each gets a
	// workflow of its own.
	Replays int `db:"replays"`
}

// WebhookStartBatch is a set of claimed deliveries. Their rows stay locked
// (so other starters skip them) until Finish or Release.
type WebhookStartBatch struct {
	tx     *sqlx.Tx
	now    time.Time
	Starts []WebhookStart
}

// ClaimWebhookStarts locks up to limit deliveries whose workflow is due to
// be started, skipping rows other starters hold. The caller must Finish or
// Release the batch.
func (s *Store) ClaimWebhookStarts(ctx context.Context, limit int) (*WebhookStartBatch, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("claim webhook starts: %w", translate(err))
	}
	b := &WebhookStartBatch{tx: tx, now: s.Now()}
	err = tx.SelectContext(ctx, &b.Starts, `
		SELECT id, endpoint_id, account_id, type, status, start_attempts, created_at, replays
		FROM webhook_deliveries
		WHERE started_at IS NULL AND next_start_at <= $1
		ORDER BY next_start_at, id
		LIMIT $2
		FOR UPDATE SKIP LOCKED`, b.now, limit)
	if err != nil {
		tx.Rollback() // the select error is the one to report
		return nil, fmt.Errorf("claim webhook starts: %w", translate(err))
	}
	return b, nil
}

// WebhookStartRetry is a delivery whose start failed and when to try again.
type WebhookStartRetry struct {
	ID    string
	After time.Duration
	Error string
}

// Finish marks the done deliveries started, reschedules the failed ones
// and commits, releasing the rows.
func (b *WebhookStartBatch) Finish(ctx context.Context, done []string, retries []WebhookStartRetry) error {
	if len(done) > 0 {
		if _, err := b.tx.ExecContext(ctx, `UPDATE webhook_deliveries SET started_at = $2, start_attempts = start_attempts + 1,
			start_error = NULL WHERE id = ANY($1)`, pq.Array(done), b.now); err != nil {
			b.tx.Rollback() // the update error is the one to report
			return fmt.Errorf("finish webhook starts: %w", translate(err))
		}
	}
	for _, r := range retries {
		if _, err := b.tx.ExecContext(ctx, `UPDATE webhook_deliveries SET start_attempts = start_attempts + 1,
			next_start_at = $2, start_error = $3 WHERE id = $1`, r.ID, b.now.Add(r.After), truncate(r.Error, 1000)); err != nil {
			b.tx.Rollback() // the update error is the one to report
			return fmt.Errorf("reschedule webhook start: %w", translate(err))
		}
	}
	return translate(b.tx.Commit())
}

// Release hands the deliveries back untouched (shutdown).
func (b *WebhookStartBatch) Release() error { return b.tx.Rollback() }
