package reportdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/pg"
)

// What the SMS provider reports: the delivery status of each message
// (sms_deliveries), and the customers' STOP messages, which name only the
// number each SMS went to (events.customer_mobile, written by the claim).

// SMSDeliveryColumn is the SMS messages of an event, for a read of
// events: the newest message of each kind (a retried invite is a new
// message) with its last report.
const SMSDeliveryColumn = `(SELECT json_object_agg(d.message,
		json_build_object('status', d.status, 'errorCode', d.error_code, 'updatedAt', d.updated_at))
	 FROM (SELECT DISTINCT ON (message) message, status, error_code, updated_at FROM sms_deliveries
	       WHERE event_id = events.id AND event_received_at = events.received_at
	       ORDER BY message, created_at DESC) d) AS sms_delivery`

// deliveryRank orders the statuses of a message, so a report that arrives
// late (sent after delivered) does not overwrite a later one. Unknown
// statuses rank lowest.
const deliveryRank = `CASE %s WHEN 'read' THEN 4
	WHEN 'delivered' THEN 3 WHEN 'undelivered' THEN 3 WHEN 'failed' THEN 3 WHEN 'canceled' THEN 3
	WHEN 'sent' THEN 2 WHEN 'sending' THEN 1 ELSE 0 END`

// RecordSMSDelivery keeps the report (the newest status of each message
// wins unless it ranks below the one kept) and suppresses the number when
// d asks for it, in one transaction. It reports false, and changes
// nothing, when the event is gone (deleted since) or, for a report
// without an event, the message is unknown: the provider need not hear of
// it, since nothing can be done.
func (s *Store) RecordSMSDelivery(ctx context.Context, d invite.SMSReport) (bool, error) {
	message := "invite"
	if d.Reminder {
		message = "reminder"
	}
	var code *int
	if d.ErrorCode != 0 {
		code = &d.ErrorCode
	}
	recorded := false
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if d.EventID == "" {
			err := tx.GetContext(ctx, &d.EventID, `SELECT event_id FROM sms_deliveries WHERE message_sid = $1`, d.MessageSID)
			if errors.Is(pg.Translate(err), pg.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
		}
		var ev struct {
			AccountID  string    `db:"account_id"`
			Mobile     string    `db:"customer_mobile"`
			ReceivedAt time.Time `db:"received_at"` // the month the report is kept in
		}
		// FOR KEY SHARE: the event cannot be deleted before the report's
		// row refers to it.
		err := tx.GetContext(ctx, &ev, `SELECT account_id, COALESCE(customer_mobile, '') AS customer_mobile, received_at
			FROM events WHERE id = $1 FOR KEY SHARE`, d.EventID)
		if errors.Is(pg.Translate(err), pg.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		now := s.Now()
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO sms_deliveries AS d (message_sid, event_id, message, status, error_code, created_at, updated_at,
				event_received_at)
			VALUES ($1, $2, $3, $4, $5, $6, $6, $7)
			ON CONFLICT ON CONSTRAINT sms_deliveries_pkey DO UPDATE
			SET status = EXCLUDED.status, error_code = EXCLUDED.error_code, updated_at = EXCLUDED.updated_at
			WHERE `+fmt.Sprintf(deliveryRank, "d.status")+` <= `+fmt.Sprintf(deliveryRank, "EXCLUDED.status"),
			d.MessageSID, d.EventID, message, d.Status, code, now, ev.ReceivedAt); err != nil {
			return fmt.Errorf("record delivery: %w", err)
		}
		recorded = true
		number := d.Number
		if number == "" {
			number = ev.Mobile
		}
		if d.Suppress == "" || number == "" {
			return nil
		}
		if _, _, err := s.suppressions.AddTx(ctx, tx, ev.AccountID, number, invite.SMS, d.Suppress, d.EventID); err != nil {
			return fmt.Errorf("suppress number: %w", err)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("sms delivery %s: %w", d.MessageSID, err)
	}
	return recorded, nil
}

// SuppressTextedNumber handles a customer's STOP: the message names only
// the customer's number and ours, which every account shares, so the
// number (E.164) goes on the suppression list, with reason, of every
// account that has sent an SMS to it — each entry naming that account's
// latest such event. A number already on an account's list keeps its
// entry. It returns how many accounts' lists gained the number.
func (s *Store) SuppressTextedNumber(ctx context.Context, number string, reason invite.SuppressionReason) (int, error) {
	added := 0
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var senders []struct {
			AccountID string `db:"account_id"`
			EventID   string `db:"id"`
		}
		// In account order, so two of these never wait on each other's
		// address locks.
		if err := tx.SelectContext(ctx, &senders, `
			SELECT DISTINCT ON (account_id) account_id, id FROM events
			WHERE customer_mobile = $1
			ORDER BY account_id, updated_at DESC, id DESC`, number); err != nil {
			return err
		}
		for _, x := range senders {
			_, created, err := s.suppressions.AddTx(ctx, tx, x.AccountID, number, invite.SMS, reason, x.EventID)
			if err != nil {
				return err
			}
			if created {
				added++
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("suppress texted number: %w", err)
	}
	return added, nil
}
