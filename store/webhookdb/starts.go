package webhookdb

import (
	"context"
	"time"

	"github.com/touchpoint/touchpoint/store/pg"
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

// ClaimWebhookStarts locks up to limit deliveries whose workflow is due to
// be started, skipping rows other starters hold. The caller must Finish or
// Release the batch.
func (s *Store) ClaimWebhookStarts(ctx context.Context, limit int) (*pg.StartBatch[WebhookStart], error) {
	return pg.ClaimStarts[WebhookStart](ctx, s.DB, "webhook_deliveries",
		"id, endpoint_id, account_id, type, status, start_attempts, created_at, replays", "webhook", limit)
}
