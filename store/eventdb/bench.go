package eventdb

// Scratch tables and counts for `touchpoint bench`: it counts the invites
// of its run and times bare writes into scratch tables beside the
// service's own.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/store/pg"
)

// InviteCounts are the invites of one event type by how far they got.
type InviteCounts struct {
	Sent    int `db:"sent"`
	Ended   int `db:"ended"`   // skipped, failed or cancelled
	Waiting int `db:"waiting"` // pending, scheduled or sending
}

// CountInvitesOfType counts the invites of an event type's events in one
// query on the index events_by_type.
func (s *Store) CountInvitesOfType(ctx context.Context, eventTypeID string) (InviteCounts, error) {
	var c InviteCounts
	err := s.db.GetContext(ctx, &c, `
		SELECT count(*) FILTER (WHERE e.invite_status = 'sent') AS sent,
		       count(*) FILTER (WHERE e.invite_status IN ('skipped', 'failed', 'cancelled')) AS ended,
		       count(*) FILTER (WHERE e.invite_status IN ('pending', 'scheduled', 'sending')) AS waiting
		FROM event_types et JOIN events e ON e.account_id = et.account_id AND e.type = et.name
		WHERE et.id = $1 AND e.event_type_id = $1`, eventTypeID)
	if err != nil {
		return InviteCounts{}, fmt.Errorf("count invites: %w", pg.Translate(err))
	}
	return c, nil
}

// InsertScratch is a scratch table of (id, received_at, payload) for
// timing bare single-row inserts beside the accept path.
type InsertScratch struct {
	db    *sqlx.DB
	table string
}

// CreateInsertScratch creates the scratch table name; Drop removes it.
func (s *Store) CreateInsertScratch(ctx context.Context, name string) (*InsertScratch, error) {
	t := &InsertScratch{db: s.db, table: pq.QuoteIdentifier(name)}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE `+t.table+` (
		id text PRIMARY KEY, received_at timestamptz NOT NULL, payload jsonb NOT NULL)`); err != nil {
		return nil, fmt.Errorf("create scratch table: %w", pg.Translate(err))
	}
	return t, nil
}

// Insert writes one row, one statement.
func (t *InsertScratch) Insert(ctx context.Context, id string, receivedAt time.Time, payload []byte) error {
	_, err := t.db.ExecContext(ctx, `INSERT INTO `+t.table+` (id, received_at, payload) VALUES ($1, $2, $3)`, id, receivedAt, payload)
	return pg.Translate(err)
}

// Drop removes the table.
func (t *InsertScratch) Drop(ctx context.Context) error {
	_, err := t.db.ExecContext(ctx, `DROP TABLE IF EXISTS `+t.table)
	return pg.Translate(err)
}

// EventsScratch is a scratch table of the events table's shape (its
// columns, defaults and indexes; no foreign keys) for timing a bare COPY
// of the rows a batch accept writes.
type EventsScratch struct {
	db    *sqlx.DB
	table string
}

// CreateEventsScratch creates the scratch table name; Drop removes it.
func (s *Store) CreateEventsScratch(ctx context.Context, name string) (*EventsScratch, error) {
	t := &EventsScratch{db: s.db, table: pq.QuoteIdentifier(name)}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE `+t.table+` (LIKE events INCLUDING DEFAULTS INCLUDING INDEXES)`); err != nil {
		return nil, fmt.Errorf("create scratch table: %w", pg.Translate(err))
	}
	return t, nil
}

// Copy writes one row per event in one transaction with COPY, with the
// values an accept writes; the event type and setting columns get
// made-up ids, since nothing is looked up.
func (t *EventsScratch) Copy(ctx context.Context, events []NewEvent) (err error) {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("copy: %w", pg.Translate(err))
	}
	defer func() {
		if err != nil {
			tx.Rollback() // the first error is the one to report
		}
	}()
	stmt, err := tx.PrepareContext(ctx, `COPY `+t.table+` (id, account_id, event_type_id, channel_id, received_at,
		type, customer_email, customer_reference, transaction_reference, transaction_date,
		estimated_delivery_date, payload, invite_setting_id, delay, delay_from, invite_medium, updated_at) FROM STDIN`)
	if err != nil {
		return fmt.Errorf("copy: %w", pg.Translate(err))
	}
	now := time.Now()
	for _, e := range events {
		var delivery any
		if e.EstimatedDeliveryDate != nil {
			delivery = e.EstimatedDeliveryDate.Format(time.DateOnly)
		}
		var ref any
		if e.CustomerReference != "" {
			ref = e.CustomerReference
		}
		if _, err = stmt.ExecContext(ctx, pg.NewID("evt"), e.AccountID, "ety-scratch", e.ChannelID, now, e.Type, e.CustomerEmail,
			ref, e.TransactionReference, e.TransactionDate.UTC(), delivery, string(e.Payload), "ist-scratch",
			"PT0S", "event", "email", now); err != nil {
			return fmt.Errorf("copy: %w", pg.Translate(err))
		}
	}
	if _, err = stmt.ExecContext(ctx); err != nil {
		return fmt.Errorf("copy: %w", pg.Translate(err))
	}
	if err = stmt.Close(); err != nil {
		return fmt.Errorf("copy: %w", pg.Translate(err))
	}
	return pg.Translate(tx.Commit())
}

// Drop removes the table.
func (t *EventsScratch) Drop(ctx context.Context) error {
	_, err := t.db.ExecContext(ctx, `DROP TABLE IF EXISTS `+t.table)
	return pg.Translate(err)
}

// NthPendingOrder is the ID of the n-th pending start order in the order
// the starter claims them, and false when fewer are pending: once it is
// done, about n orders have been, without counting a large backlog.
func (s *Store) NthPendingOrder(ctx context.Context, n int) (id int64, ok bool, err error) {
	err = s.db.GetContext(ctx, &id, `SELECT id FROM outbox WHERE done_at IS NULL
		ORDER BY next_attempt_at, id OFFSET $1 LIMIT 1`, n-1)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, pg.Translate(err)
}

// OrderDone reports whether the order id has been carried out.
func (s *Store) OrderDone(ctx context.Context, id int64) (bool, error) {
	var done bool
	err := s.db.GetContext(ctx, &done, `SELECT done_at IS NOT NULL FROM outbox WHERE id = $1`, id)
	return done, pg.Translate(err)
}

// DiscardPendingOrders marks every pending order done without carrying it
// out: a measurement that sampled the drain of a large backlog leaves no
// backlog behind to compete with what it measures next. Only for a
// database of its own.
func (s *Store) DiscardPendingOrders(ctx context.Context) (int64, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE outbox SET done_at = $1, last_error = 'discarded by bench' WHERE done_at IS NULL`, s.Now())
	if err != nil {
		return 0, pg.Translate(err)
	}
	return res.RowsAffected()
}
