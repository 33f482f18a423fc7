package webhookdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Replaying failed deliveries: an endpoint that was down for the whole
// retry schedule gets its messages again once it is back. A replay makes
// a failed delivery pending again and hands it to the webhook starter
// (started_at cleared), which starts a new delivery workflow for it. The
// delivery keeps its ID (the webhook-id) and its body; each attempt reads
// the endpoint's URL, secrets and state afresh, so a replay goes where the
// endpoint points now, signed with the secrets that sign now.

// ErrEndpointDisabled refuses a replay to a disabled endpoint: it would
// be given up at once. Enable the endpoint first.
var ErrEndpointDisabled = errors.New("the endpoint is disabled; enable it before replaying its deliveries")

// ErrNotFailed refuses a retry of a delivery that has not failed: a
// pending one is on its way, a succeeded one was answered 2xx.
var ErrNotFailed = errors.New("only a failed delivery can be retried")

// ReplayFilter selects the failed deliveries of an endpoint to replay by
// when they were made: Since (inclusive) to Until (exclusive; zero: no
// end).
type ReplayFilter struct {
	Since, Until time.Time
}

// MaxReplayPeriod bounds a replay's period: failed deliveries are kept
// for 30 days, so a longer period names nothing more.
const MaxReplayPeriod = 31 * 24 * time.Hour

// Problem says what is wrong with the filter's period at now, naming the
// bound at fault ("since" or "until"); "" when nothing is. Without Until
// the period ends now, so Since is then at most MaxReplayPeriod ago: the
// API and the operator's command hold a replay to the same period.
func (f ReplayFilter) Problem(now time.Time) (bound, problem string) {
	switch {
	case f.Until.IsZero() && now.Sub(f.Since) > MaxReplayPeriod:
		return "since", "must be at most 31 days ago (failed deliveries are kept 30 days)"
	case f.Until.IsZero():
		return "", ""
	case !f.Until.After(f.Since):
		return "until", "must be later than since"
	case f.Until.Sub(f.Since) > MaxReplayPeriod:
		return "until", "must be at most 31 days after since"
	}
	return "", ""
}

// RetryWebhookDelivery replays one failed delivery of an account's
// endpoint. pg.ErrNotFound when the account has no such endpoint or the
// endpoint no such delivery; ErrEndpointDisabled; ErrNotFailed.
func (s *Store) RetryWebhookDelivery(ctx context.Context, accountID, endpointID, deliveryID string) (WebhookDelivery, error) {
	var d WebhookDelivery
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if err := lockEnabledEndpoint(ctx, tx, accountID, endpointID); err != nil {
			return err
		}
		if err := tx.GetContext(ctx, &d, `SELECT `+webhookDeliveryColumns+` FROM webhook_deliveries
			WHERE id = $1 AND endpoint_id = $2 FOR UPDATE`, deliveryID, endpointID); err != nil {
			return pg.Translate(err)
		}
		if d.Status != DeliveryFailed {
			return ErrNotFailed
		}
		now := s.Now()
		if err := tx.GetContext(ctx, &d, `UPDATE webhook_deliveries SET `+replaySet(2)+`
			WHERE id = $1 RETURNING `+webhookDeliveryColumns, deliveryID, now); err != nil {
			return err
		}
		return persondb.RecordChange(ctx, tx, now, accountID, persondb.AuditWebhookRetried, deliveryID,
			map[string]string{"endpointId": endpointID})
	})
	if err != nil {
		return WebhookDelivery{}, fmt.Errorf("retry webhook delivery %s: %w", deliveryID, err)
	}
	return d, nil
}

// ReplayWebhookDeliveries replays the failed deliveries of an account's
// endpoint made within f, and returns how many; with dryRun it only
// counts them. pg.ErrNotFound when the account has no such endpoint;
// ErrEndpointDisabled.
func (s *Store) ReplayWebhookDeliveries(ctx context.Context, accountID, endpointID string, f ReplayFilter, dryRun bool) (int, error) {
	var n int
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if err := lockEnabledEndpoint(ctx, tx, accountID, endpointID); err != nil {
			return err
		}
		until := f.Until
		if until.IsZero() {
			until = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		const failedWithin = `endpoint_id = $1 AND status = 'failed' AND created_at >= $2 AND created_at < $3`
		if dryRun {
			return tx.GetContext(ctx, &n, `SELECT count(*) FROM webhook_deliveries WHERE `+failedWithin, endpointID, f.Since, until)
		}
		now := s.Now()
		res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET `+replaySet(4)+` WHERE `+failedWithin,
			endpointID, f.Since, until, now)
		if err != nil {
			return err
		}
		affected, err := res.RowsAffected()
		if err != nil {
			return err
		}
		n = int(affected)
		return persondb.RecordChange(ctx, tx, now, accountID, persondb.AuditWebhooksReplayed, endpointID,
			map[string]string{"deliveries": strconv.Itoa(n)})
	})
	if err != nil {
		return 0, fmt.Errorf("replay webhook deliveries of %s: %w", endpointID, pg.Translate(err))
	}
	return n, nil
}

// replaySet makes a delivery pending and due to be started at the time in
// parameter now, counting the replay; it has no reason to fail any more.
// Its attempts, last answer and error stay until the next attempt
// overwrites them.
func replaySet(now int) string {
	return fmt.Sprintf(`status = 'pending', reason = NULL, replays = replays + 1, started_at = NULL, next_start_at = $%d,
		start_attempts = 0, start_error = NULL`, now)
}

// WebhookEndpointAccount is the account of an endpoint, for the operator's
// commands, which name an endpoint alone.
func (s *Store) WebhookEndpointAccount(ctx context.Context, endpointID string) (string, error) {
	var accountID string
	err := s.db.GetContext(ctx, &accountID, `SELECT account_id FROM webhook_endpoints WHERE id = $1`, endpointID)
	return accountID, pg.Translate(err)
}

// lockEnabledEndpoint holds the account's endpoint against a concurrent
// disable (which gives up pending deliveries) until the replay commits.
func lockEnabledEndpoint(ctx context.Context, tx *sqlx.Tx, accountID, endpointID string) error {
	var enabled bool
	if err := tx.GetContext(ctx, &enabled, `SELECT enabled FROM webhook_endpoints WHERE id = $1 AND account_id = $2 FOR SHARE`,
		endpointID, accountID); err != nil {
		return pg.Translate(err)
	}
	if !enabled {
		return ErrEndpointDisabled
	}
	return nil
}
