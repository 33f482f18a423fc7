package invitedb

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// An invite by SMS keeps the number it went to (events.customer_mobile,
// written by the claim): the throttle counts it, and an inbound STOP
// looks it up (store/reportdb, which keeps the provider's delivery
// reports too).

// recordMobile notes, inside a claim, the number the event's SMS is about
// to go to, so that later claims count it (throttleSMS) and a STOP from
// the number finds the account (reportdb's SuppressTextedNumber).
func recordMobile(ctx context.Context, tx *sqlx.Tx, eventID, number string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE events SET customer_mobile = $2
		WHERE id = $1 AND customer_mobile IS DISTINCT FROM $2`, eventID, number); err != nil {
		return fmt.Errorf("record mobile: %w", err)
	}
	return nil
}

// throttleSMS is minDaysBetweenInvites for SMS: whether another of the
// account's SMS invites went to the number (E.164) since the start of the
// window, or is being sent. Like the email throttle it runs under the
// (account, address) lock that mayReach holds, so two claims for one
// number are decided one after the other. A reminder sets customer_mobile
// too but is no invite by SMS unless the invite itself was
// (invite_medium).
func throttleSMS(ctx context.Context, tx *sqlx.Tx, eventID, accountID, number string, since time.Time) (bool, error) {
	var recent bool
	err := tx.GetContext(ctx, &recent, `
		SELECT EXISTS (
			SELECT 1 FROM events
			WHERE customer_mobile = $2 AND account_id = $1 AND id <> $3 AND invite_medium = 'sms'
			  AND ((invite_status = 'sent' AND sent_at > $4) OR (invite_status = 'sending' AND updated_at > $4)))`,
		accountID, number, eventID, since)
	if err != nil {
		return false, fmt.Errorf("throttle: %w", err)
	}
	return recent, nil
}
