package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
)

// housekeepingLock is the advisory lock that lets one API replica at a time
// do the housekeeping round; the others skip it.
const housekeepingLock = 0x746f756369 // "touci"

// Cleanup is what one housekeeping round removed.
type Cleanup struct {
	IdempotencyKeys, TokenUses, OutboxRows, Events int64
	// SendCounters are the daily send-quota counters of past days.
	SendCounters int64
	// WebhookDeliveries are deliveries that ended longer ago than
	// WebhookDeliveryKeep.
	WebhookDeliveries int64
	// MailNonces are mail providers' once-signed values older than
	// MailNonceKeep, which no request can carry any more.
	MailNonces int64
}

// WebhookDeliveryKeep is how long a webhook delivery that ended (succeeded
// or given up) stays in GET /webhooks/{id}/deliveries.
const WebhookDeliveryKeep = 30 * 24 * time.Hour

// Housekeep deletes expired idempotency keys and token uses, outbox rows
// finished more than outboxKeep ago, the send-quota counters of days
// before yesterday (UTC), webhook deliveries that ended more than
// WebhookDeliveryKeep ago and, when retention > 0, events older than
// retention whose invite has ended. It returns ran=false when another
// replica holds the round.
func (s *Store) Housekeep(ctx context.Context, outboxKeep, retention time.Duration) (c Cleanup, ran bool, err error) {
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
			n    *int64
			sql  string
			arg  time.Time
			skip bool
		}{
			{&c.IdempotencyKeys, `DELETE FROM idempotency_keys WHERE expires_at < $1`, now, false},
			{&c.TokenUses, `DELETE FROM token_uses WHERE expires_at < $1`, now, false},
			{&c.OutboxRows, `DELETE FROM outbox WHERE done_at < $1`, now.Add(-outboxKeep), false},
			{&c.Events, `DELETE FROM events WHERE received_at < $1
				AND invite_status IN ('sent', 'skipped', 'failed', 'cancelled')`, now.Add(-retention), retention <= 0},
			{&accountCounters, `DELETE FROM account_daily_sends WHERE day < ($1::timestamptz AT TIME ZONE 'UTC')::date`, yesterday, false},
			{&recipientCounters, `DELETE FROM recipient_daily_sends WHERE day < ($1::timestamptz AT TIME ZONE 'UTC')::date`, yesterday, false},
			{&eventCounters, `DELETE FROM account_daily_events WHERE day < ($1::timestamptz AT TIME ZONE 'UTC')::date`, yesterday, false},
			{&c.WebhookDeliveries, `DELETE FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1`,
				now.Add(-WebhookDeliveryKeep), false},
			{&c.MailNonces, `DELETE FROM mail_event_nonces WHERE signed_at < $1`, now.Add(-MailNonceKeep), false},
		}
		for _, st := range steps {
			if st.skip {
				continue
			}
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

// Housekeeping intervals: how often a round runs, and how long finished
// outbox rows are kept (for support to see what was started when).
const (
	HousekeepingEvery = 5 * time.Minute
	OutboxKeep        = time.Hour
)

// RunHousekeeping runs a Housekeep round every HousekeepingEvery until ctx
// ends; with several API replicas one of them does each round. Failures
// are logged and the next round tries again.
func (s *Store) RunHousekeeping(ctx context.Context, retention time.Duration, logger *slog.Logger) error {
	t := time.NewTicker(HousekeepingEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		c, ran, err := s.Housekeep(ctx, OutboxKeep, retention)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("housekeeping failed; will try again", "error", err)
		case ran && c != Cleanup{}:
			logger.Info("housekeeping", "idempotency_keys", c.IdempotencyKeys, "token_uses", c.TokenUses,
				"outbox_rows", c.OutboxRows, "events", c.Events, "send_counters", c.SendCounters,
				"webhook_deliveries", c.WebhookDeliveries)
		}
	}
}
