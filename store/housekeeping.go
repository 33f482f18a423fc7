package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/partitiondb"
	"github.com/touchpoint/touchpoint/store/reportdb"
)

// housekeepingLock is the advisory lock that lets one API replica at a time
// do the housekeeping round; the others skip it.
const housekeepingLock = 0x746f756369 // "touci"

// Cleanup is what one housekeeping round removed row by row: the rows of
// small tables that expire. The tables that grow with traffic lose whole
// months instead (Partitions).
type Cleanup struct {
	IdempotencyKeys, OutboxRows int64
	// SendCounters are the daily send-quota counters of past days.
	SendCounters int64
	// MailNonces are mail providers' once-signed values older than
	// reportdb.MailNonceKeep, which no request can carry any more.
	MailNonces int64
}

// WebhookDeliveryKeep is how long, at least, a webhook delivery stays in
// GET /webhooks/{id}/deliveries: its month is dropped once the month has
// been over this long and none of its deliveries is pending.
const WebhookDeliveryKeep = 30 * 24 * time.Hour

// Housekeep deletes expired idempotency keys, outbox rows finished more
// than outboxKeep ago, the send-quota counters of days before yesterday
// (UTC) and mail nonces no request can carry any more. It returns
// ran=false when another replica holds the round.
func (s *Store) Housekeep(ctx context.Context, outboxKeep time.Duration) (c Cleanup, ran bool, err error) {
	now := s.Now()
	err = s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &ran, `SELECT pg_try_advisory_xact_lock($1)`, housekeepingLock); err != nil || !ran {
			return err
		}
		// Counters of today and yesterday (UTC) are kept: yesterday's
		// still counts for a clock running a little behind.
		yesterday := now.UTC().AddDate(0, 0, -1).Truncate(24 * time.Hour)
		var accountCounters, recipientCounters, eventCounters int64
		steps := []struct {
			n   *int64
			sql string
			arg time.Time
		}{
			{&c.IdempotencyKeys, `DELETE FROM idempotency_keys WHERE expires_at < $1`, now},
			{&c.OutboxRows, `DELETE FROM outbox WHERE done_at < $1`, now.Add(-outboxKeep)},
			{&accountCounters, `DELETE FROM account_daily_sends WHERE day < ($1::timestamptz AT TIME ZONE 'UTC')::date`, yesterday},
			{&recipientCounters, `DELETE FROM recipient_daily_sends WHERE day < ($1::timestamptz AT TIME ZONE 'UTC')::date`, yesterday},
			{&eventCounters, `DELETE FROM account_daily_events WHERE day < ($1::timestamptz AT TIME ZONE 'UTC')::date`, yesterday},
			{&c.MailNonces, `DELETE FROM mail_event_nonces WHERE signed_at < $1`, now.Add(-reportdb.MailNonceKeep)},
		}
		for _, st := range steps {
			res, err := tx.ExecContext(ctx, st.sql, st.arg)
			if err != nil {
				return fmt.Errorf("housekeeping: %w", err)
			}
			*st.n, _ = res.RowsAffected()
		}
		c.SendCounters = accountCounters + recipientCounters + eventCounters
		return nil
	})
	return c, ran, err
}

// PartitionOptions are how long housekeeping keeps the months of the
// partitioned tables, with events kept for retention (0: forever).
func PartitionOptions(retention time.Duration) partitiondb.Options {
	return partitiondb.Options{Retention: retention, OutboxKeep: OutboxKeep, WebhookKeep: WebhookDeliveryKeep}
}

// Housekeeping intervals: how often a round runs, and how long finished
// outbox rows are kept (for support to see what was started when).
const (
	HousekeepingEvery = 5 * time.Minute
	OutboxKeep        = time.Hour
)

// RunHousekeeping runs a round of the partitions' maintenance at once and
// then, every HousekeepingEvery until ctx ends, a Housekeep round and
// another of the partitions' (events kept for retention; 0: forever); with
// several API replicas one of them does each round. Failures are logged
// and the next round tries again.
func (s *Store) RunHousekeeping(ctx context.Context, retention time.Duration, logger *slog.Logger) error {
	t := time.NewTicker(HousekeepingEvery)
	defer t.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
			c, ran, err := s.Housekeep(ctx, OutboxKeep)
			switch {
			case err != nil && ctx.Err() == nil:
				logger.Warn("housekeeping failed; will try again", "error", err)
			case ran && c != Cleanup{}:
				logger.Info("housekeeping", "idempotency_keys", c.IdempotencyKeys, "outbox_rows", c.OutboxRows,
					"send_counters", c.SendCounters, "mail_nonces", c.MailNonces)
			}
		}
		r, ran, err := s.Partitions.Maintain(ctx, PartitionOptions(retention))
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("monthly partitions: maintenance failed; will try again", "error", err)
		case ran && (r.Made > 0 || len(r.Dropped) > 0):
			logger.Info("monthly partitions", "made", r.Made, "dropped", r.Dropped)
		}
		if ran && len(r.Held) > 0 {
			logger.Warn("monthly partitions: months past their retention kept, their invites are not done", "months", r.Held)
		}
	}
}
