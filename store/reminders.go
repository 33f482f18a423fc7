package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sendtime"
)

// The reminder of an invite (SPEC §11.3) has its own small state machine
// in the event row, beside the invite's: planned once the invite is sent,
// then sent at most once, skipped or cancelled. Every transition locks the
// row, like the invite's, so it is ordered against the API's cancel.

const reminderColumns = `COALESCE(reminder_status, '') AS reminder_status, COALESCE(reminder_reason, '') AS reminder_reason,
	reminder_scheduled_for, reminder_sent_at`

// LoadReminderPlan reads what the reminder of a sent invite is scheduled
// from: the setting's reminder delay as it is now, the time the invite
// was sent and the event's send window. A Delay of "" means no reminder
// (none configured, or the invite was not sent).
func (s *Store) LoadReminderPlan(ctx context.Context, eventID string) (invite.ReminderPlan, error) {
	var r struct {
		Status     invite.Status `db:"invite_status"`
		SentAt     *time.Time    `db:"sent_at"`
		Delay      string        `db:"reminder_delay"`
		SendWindow []byte        `db:"send_window"`
	}
	err := s.db.GetContext(ctx, &r, `
		SELECT e.invite_status, e.sent_at, COALESCE(s.reminder_delay, '') AS reminder_delay, e.send_window
		FROM events e JOIN invite_settings s ON s.id = e.invite_setting_id
		WHERE e.id = $1`, eventID)
	if err != nil {
		return invite.ReminderPlan{}, fmt.Errorf("load reminder plan: %w", translate(err))
	}
	if r.Status != invite.Sent || r.SentAt == nil || r.Delay == "" {
		return invite.ReminderPlan{}, nil
	}
	p := invite.ReminderPlan{Delay: r.Delay, Plan: sendtime.Plan{ReceivedAt: r.SentAt.UTC(), TransactionDate: r.SentAt.UTC(),
		Delay: r.Delay, DelayFrom: DelayFromEvent}}
	if r.SendWindow != nil {
		p.Plan.SendWindow = new(sendtime.SendWindow)
		if err := json.Unmarshal(r.SendWindow, p.Plan.SendWindow); err != nil {
			return invite.ReminderPlan{}, fmt.Errorf("event %s: decode send_window: %w", eventID, err)
		}
	}
	return p, nil
}

// LoadReminder returns the reminder state of an event.
func (s *Store) LoadReminder(ctx context.Context, eventID string) (invite.Reminder, error) {
	var r invite.Reminder
	err := s.db.GetContext(ctx, &r, `SELECT `+reminderColumns+` FROM events WHERE id = $1`, eventID)
	return r, translate(err)
}

// changeReminder is changeInvite for the reminder: next sees the invite's
// status and the reminder, and returns the reminder to write when it
// reports a change.
func (s *Store) changeReminder(ctx context.Context, eventID string,
	next func(tx *sqlx.Tx, inviteStatus invite.Status, cur invite.Reminder) (invite.Reminder, bool, error)) (invite.Reminder, error) {
	var out invite.Reminder
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var row struct {
			InviteStatus invite.Status `db:"invite_status"`
			invite.Reminder
		}
		if err := tx.GetContext(ctx, &row, `SELECT invite_status, `+reminderColumns+` FROM events WHERE id = $1 FOR UPDATE`, eventID); err != nil {
			return err
		}
		n, changed, err := next(tx, row.InviteStatus, row.Reminder)
		if err != nil || !changed {
			out = row.Reminder
			return err
		}
		out = n
		if err := s.trackReminderAttempt(ctx, tx, eventID, row.Reminder, n); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE events SET reminder_status = NULLIF($2, ''), reminder_reason = NULLIF($3, ''),
			reminder_scheduled_for = $4, reminder_sent_at = $5, updated_at = $6 WHERE id = $1`,
			eventID, n.Status, n.Reason, n.ScheduledFor, n.SentAt, s.Now())
		if err != nil {
			return err
		}
		return s.emitReminderWebhook(ctx, tx, eventID, row.Reminder.Status, n.Status)
	})
	if err != nil {
		return invite.Reminder{}, fmt.Errorf("reminder %s: %w", eventID, err)
	}
	return out, nil
}

// MarkReminderScheduled plans the reminder of a sent invite at at; a
// reminder planned already keeps its state (a retry of this step).
func (s *Store) MarkReminderScheduled(ctx context.Context, eventID string, at time.Time) (invite.Reminder, error) {
	at = at.UTC().Truncate(time.Millisecond)
	return s.changeReminder(ctx, eventID, func(_ *sqlx.Tx, inv invite.Status, cur invite.Reminder) (invite.Reminder, bool, error) {
		if inv != invite.Sent || cur.Status != "" {
			return cur, false, nil
		}
		return invite.Reminder{Status: invite.Scheduled, ScheduledFor: &at}, true, nil
	})
}

// MarkReminderSkipped records that a scheduled reminder is not sent.
func (s *Store) MarkReminderSkipped(ctx context.Context, eventID string, reason invite.Reason) (invite.Reminder, error) {
	return s.changeReminder(ctx, eventID, func(_ *sqlx.Tx, _ invite.Status, cur invite.Reminder) (invite.Reminder, bool, error) {
		if cur.Status != invite.Scheduled {
			return cur, false, nil
		}
		cur.Status, cur.Reason = invite.Skipped, reason
		return cur, true, nil
	})
}

// MarkReminderCancelled cancels a scheduled reminder (a cancel signal from
// the Temporal UI; the API cancels with CancelInvite).
func (s *Store) MarkReminderCancelled(ctx context.Context, eventID string) (invite.Reminder, error) {
	return s.changeReminder(ctx, eventID, func(_ *sqlx.Tx, _ invite.Status, cur invite.Reminder) (invite.Reminder, bool, error) {
		if cur.Status != invite.Scheduled {
			return cur, false, nil
		}
		cur.Status = invite.Cancelled
		return cur, true, nil
	})
}

// ReminderClaim is the outcome of ClaimReminderSend.
type ReminderClaim struct {
	Reminder invite.Reminder
	Medium   invite.Medium
	// Send: the reminder is marked sending; deliver it to Address, then
	// record the outcome with FinishReminderSend.
	Send    bool
	Address string
}

// ClaimReminderSend is the record-before step of a reminder: with the row
// and the address locked, a scheduled reminder is skipped when a review
// exists (reviewed), the setting is inactive or the address suppressed,
// and otherwise marked sending. One found sending was left by a crashed
// attempt: it may have gone out, so it is skipped (delivery_uncertain),
// never sent twice. A reminder belongs to its invite: it neither counts
// toward nor is blocked by minDaysBetweenInvites.
func (s *Store) ClaimReminderSend(ctx context.Context, eventID string, opts ClaimOptions) (ReminderClaim, error) {
	var claim ReminderClaim
	rem, err := s.changeReminder(ctx, eventID, func(tx *sqlx.Tx, _ invite.Status, cur invite.Reminder) (invite.Reminder, bool, error) {
		skip := func(reason invite.Reason) (invite.Reminder, bool, error) {
			cur.Status, cur.Reason = invite.Skipped, reason
			return cur, true, nil
		}
		switch cur.Status {
		case invite.Scheduled:
		case invite.Sending:
			return skip(invite.DeliveryUncertain)
		default:
			return cur, false, nil
		}
		var r struct {
			claimRow
			Reviewed bool `db:"reviewed"`
		}
		if err := tx.GetContext(ctx, &r, `
			SELECT e.account_id, e.customer_email, et.active AS event_type_active, s.active AS setting_active, s.medium,
			       s.min_days_between_invites, EXISTS (SELECT 1 FROM reviews r WHERE r.event_id = e.id) AS reviewed
			FROM events e
			JOIN event_types et ON et.id = e.event_type_id
			JOIN invite_settings s ON s.id = e.invite_setting_id
			WHERE e.id = $1`, eventID); err != nil {
			return cur, false, fmt.Errorf("read setting: %w", err)
		}
		claim.Medium = r.Medium
		address := lowerEmail(r.Email)
		if r.Medium == invite.SMS {
			address = opts.Mobile
		}
		switch {
		case r.Reviewed:
			return skip(invite.Reviewed)
		case !r.EventTypeActive:
			return skip(invite.EventTypeInactive)
		case !r.SettingActive:
			return skip(invite.SettingInactive)
		case address == "":
			return skip(invite.NoAddress)
		case r.Medium == invite.SMS && !opts.SMSEnabled:
			return skip(invite.NoProvider)
		}
		r.MinDays = 0 // the throttle does not apply to reminders
		reason, err := s.mayReach(ctx, tx, eventID, r.claimRow, address)
		if err != nil || reason != "" {
			if err != nil {
				return cur, false, err
			}
			return skip(reason)
		}
		// Sender quotas count a reminder (SPEC §11.10), the per-address
		// cap does not: it belongs to its invite.
		if reason, _, err := s.quotaReason(ctx, tx, r.AccountID, sendAddress(r.Medium, address, address), quotaReminder, 0); err != nil || reason != "" {
			if err != nil {
				return cur, false, err
			}
			return skip(reason)
		}
		if r.Medium == invite.SMS {
			if err := s.recordMobile(ctx, tx, eventID, address); err != nil {
				return cur, false, err
			}
		}
		cur.Status, claim.Send, claim.Address = invite.Sending, true, address
		return cur, true, nil
	})
	claim.Reminder = rem
	return claim, err
}

// FinishReminderSend records how a claimed reminder send ended: sent at
// o.SentAt, back to scheduled for another try (o.Retry), or skipped with
// o.Reason (a permanent refusal; o.Suppress suppresses the address as for
// an invite). Only a reminder still sending changes — except that a
// delivery wins over an earlier verdict of delivery_uncertain.
func (s *Store) FinishReminderSend(ctx context.Context, eventID string, o SendOutcome) (invite.Reminder, error) {
	return s.changeReminder(ctx, eventID, func(tx *sqlx.Tx, _ invite.Status, cur invite.Reminder) (invite.Reminder, bool, error) {
		uncertain := cur.Status == invite.Skipped && cur.Reason == invite.DeliveryUncertain
		switch {
		case !o.SentAt.IsZero() && (cur.Status == invite.Sending || uncertain):
			// A delivery always wins over a verdict of delivery_uncertain.
			at := o.SentAt.UTC().Truncate(time.Millisecond)
			cur.Status, cur.Reason, cur.SentAt = invite.Sent, "", &at
		case cur.Status != invite.Sending || !o.SentAt.IsZero():
			return cur, false, nil
		case o.Retry:
			cur.Status = invite.Scheduled
		default:
			cur.Status, cur.Reason = invite.Skipped, o.Reason
			if err := s.suppressFor(ctx, tx, eventID, o); err != nil {
				return cur, false, err
			}
		}
		return cur, true, nil
	})
}
