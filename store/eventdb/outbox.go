package eventdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/pg"
)

// OutboxChannel is the LISTEN/NOTIFY channel that wakes workflow starters.
const OutboxChannel = "touchpoint_outbox"

// StartOrder is one outbox row with what starting its workflow needs.
type StartOrder struct {
	ID                int64           `db:"id"`
	EventID           string          `db:"event_id"`
	Kind              invite.RunOrder `db:"kind"`
	Attempts          int             `db:"attempts"`
	CreatedAt         time.Time       `db:"created_at"`
	AccountID         string          `db:"account_id"`
	EventTypeID       string          `db:"event_type_id"`
	EventType         string          `db:"type"`
	ChannelID         string          `db:"channel_id"`
	CustomerReference sql.NullString  `db:"customer_reference"`
	InviteStatus      invite.Status   `db:"invite_status"`
	// ReminderStatus is the status of the event's reminder ("" while none
	// is planned): a restart of a sent invite's run is its reminder's.
	ReminderStatus invite.Status `db:"reminder_status"`
}

// OutboxBatch is a set of claimed start orders. Its rows stay locked (so
// other starters skip them) until Finish or Release.
type OutboxBatch struct {
	tx     *sqlx.Tx
	now    time.Time
	Orders []StartOrder
}

// ClaimOutbox locks up to limit due start orders, skipping rows that other
// starters hold. The caller must Finish or Release the batch.
func (s *Store) ClaimOutbox(ctx context.Context, limit int) (*OutboxBatch, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("claim outbox: %w", pg.Translate(err))
	}
	b := &OutboxBatch{tx: tx, now: s.Now()}
	err = tx.SelectContext(ctx, &b.Orders, `
		SELECT o.id, o.event_id, o.kind, o.attempts, o.created_at, e.account_id, e.event_type_id, e.type,
		       e.channel_id, e.customer_reference, e.invite_status, COALESCE(e.reminder_status, '') AS reminder_status
		FROM outbox o JOIN events e ON e.id = o.event_id
		WHERE o.done_at IS NULL AND o.next_attempt_at <= $1
		ORDER BY o.next_attempt_at, o.id
		LIMIT $2
		FOR UPDATE OF o SKIP LOCKED`, b.now, limit)
	if err != nil {
		tx.Rollback() // the select error is the one to report
		return nil, fmt.Errorf("claim outbox: %w", pg.Translate(err))
	}
	return b, nil
}

// Retry is a start order that failed and when to try it again.
type Retry struct {
	ID    int64
	After time.Duration
	Error string
}

// Finish marks the done orders finished, reschedules the failed ones and
// commits, releasing the rows.
func (b *OutboxBatch) Finish(ctx context.Context, done []int64, retries []Retry) error {
	if len(done) > 0 {
		if _, err := b.tx.ExecContext(ctx, `UPDATE outbox SET done_at = $2, attempts = attempts + 1, last_error = NULL WHERE id = ANY($1)`,
			pq.Array(done), b.now); err != nil {
			b.tx.Rollback() // the update error is the one to report
			return fmt.Errorf("finish outbox: %w", pg.Translate(err))
		}
	}
	for _, r := range retries {
		if _, err := b.tx.ExecContext(ctx, `UPDATE outbox SET attempts = attempts + 1, next_attempt_at = $2, last_error = $3 WHERE id = $1`,
			r.ID, b.now.Add(r.After), pg.Truncate(r.Error, 1000)); err != nil {
			b.tx.Rollback() // the update error is the one to report
			return fmt.Errorf("reschedule outbox: %w", pg.Translate(err))
		}
	}
	return pg.Translate(b.tx.Commit())
}

// Release hands the orders back untouched (shutdown): another starter, or
// this one after a restart, takes them.
func (b *OutboxBatch) Release() error { return b.tx.Rollback() }

// OrderRunTx orders, in tx, a new workflow run of the event (a retry or
// a restart, run) due at once.
func OrderRunTx(ctx context.Context, tx *sqlx.Tx, eventID string, run invite.RunOrder, at time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO outbox (event_id, kind, created_at, next_attempt_at) VALUES ($1, $2, $3, $3)`,
		eventID, string(run), at); err != nil {
		return fmt.Errorf("order a run: %w", err)
	}
	return nil
}

// Notify wakes every starter listening on OutboxChannel. It is sent after
// accept transactions commit, coalesced, never inside them: a NOTIFY in
// every accept would serialise commits on the notify queue lock.
func (s *Store) Notify(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `SELECT pg_notify($1, '')`, OutboxChannel)
	return pg.Translate(err)
}

// OutboxBacklog reports the pending start orders and the age of the oldest.
func (s *Store) OutboxBacklog(ctx context.Context) (pending int, oldest time.Duration, err error) {
	var r struct {
		N      int          `db:"n"`
		Oldest sql.NullTime `db:"oldest"`
	}
	if err := s.db.GetContext(ctx, &r, `SELECT count(*) AS n, min(created_at) AS oldest FROM outbox WHERE done_at IS NULL`); err != nil {
		return 0, 0, pg.Translate(err)
	}
	if r.Oldest.Valid {
		oldest = s.Now().Sub(r.Oldest.Time)
	}
	return r.N, oldest, nil
}
