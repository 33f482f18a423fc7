package invitedb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
)

// The send pipeline's side of the database. An event's invite and its
// reminder are two kinds of one send (invite.Kind) whose rules live in
// the invite package as pure functions. Every step here is the same
// imperative shell around one of them (change): lock the event's row,
// read the send's state and the facts the rule needs, call the rule, and
// apply the Change it returns — the state, the attempt row, the webhook
// deliveries and the rule's own effects — in one transaction. The row
// lock orders each step against every other and against the API's cancel.

// sendState is a send's state as its row lock reads it, with the status
// of the event's invite: a reminder is planned only for a sent invite.
type sendState struct {
	invite.State
	InviteStatus invite.Status `db:"parent_status"`
}

// inviteStateColumns read the invite's state as an invite.State.
const inviteStateColumns = `invite_status, COALESCE(invite_reason, '') AS invite_reason,
	COALESCE(invite_medium, '') AS invite_medium, scheduled_for, sent_at, attempts,
	COALESCE(last_error, '') AS last_error`

// reminderStateColumns read the reminder's state as an invite.State. Its
// medium and last error are not kept (the setting's medium, the attempt's
// detail), and its attempts are counted in its attempt rows.
const reminderStateColumns = `COALESCE(reminder_status, '') AS invite_status, COALESCE(reminder_reason, '') AS invite_reason,
	'' AS invite_medium, reminder_scheduled_for AS scheduled_for, reminder_sent_at AS sent_at,
	(SELECT COALESCE(max(a.n), 0) FROM send_attempts a WHERE a.event_id = events.id AND a.kind = 'reminder') AS attempts,
	'' AS last_error`

const (
	lockInviteSQL   = `SELECT invite_status AS parent_status, ` + inviteStateColumns + ` FROM events WHERE id = $1 FOR UPDATE`
	lockReminderSQL = `SELECT invite_status AS parent_status, ` + reminderStateColumns + ` FROM events WHERE id = $1 FOR UPDATE`
	writeInviteSQL  = `
	UPDATE events SET invite_status = $2, invite_reason = NULLIF($3, ''),
	       invite_medium = NULLIF($4, ''), scheduled_for = $5, sent_at = $6, attempts = $7,
	       last_error = NULLIF($8, ''), updated_at = $9
	WHERE id = $1`
	writeReminderSQL = `
	UPDATE events SET reminder_status = NULLIF($2, ''), reminder_reason = NULLIF($3, ''),
	       reminder_scheduled_for = $4, reminder_sent_at = $5, updated_at = $6
	WHERE id = $1`
)

// lockStmt and writeStmt are the statements that lock and write the send
// of kind k.
func (st *inviteStatements) lockStmt(k invite.Kind) *pg.Stmt {
	if k == invite.KindReminder {
		return st.lockReminder
	}
	return st.lockInvite
}

func (st *inviteStatements) writeStmt(k invite.Kind) *pg.Stmt {
	if k == invite.KindReminder {
		return st.writeReminder
	}
	return st.writeInvite
}

// change runs the rule of one step on the event's send of kind k (see
// above) and returns the Change it made. A refusal of the rule is
// returned as its error (invite.ErrRefused), with the state found, and
// writes nothing.
func (s *Store) change(ctx context.Context, k invite.Kind, eventID string,
	rule func(tx *sqlx.Tx, cur sendState) (invite.Change, error)) (invite.Change, error) {
	if !k.Valid() {
		return invite.Change{}, fmt.Errorf("%s: unknown kind of send %q", eventID, k)
	}
	if err := s.invite.prepareForTx(ctx); err != nil {
		return invite.Change{}, fmt.Errorf("%s %s: %w", k, eventID, pg.Translate(err))
	}
	var out invite.Change
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var cur sendState
		if err := s.invite.lockStmt(k).Get(ctx, tx, &cur, eventID); err != nil {
			return err
		}
		c, err := rule(tx, cur)
		out = c
		if err != nil {
			return err
		}
		return s.apply(ctx, tx, eventID, c)
	})
	if err != nil && !errors.Is(err, invite.ErrRefused) {
		return invite.Change{}, fmt.Errorf("%s %s: %w", k, eventID, err)
	}
	return out, err
}

// step is change for a workflow step, which is repeated safely: a rule
// that does not apply to the state found leaves it as it is, and the
// step answers with that state.
func (s *Store) step(ctx context.Context, k invite.Kind, eventID string,
	rule func(tx *sqlx.Tx, cur sendState) (invite.Change, error)) (invite.State, error) {
	c, err := s.change(ctx, k, eventID, rule)
	if err != nil && !errors.Is(err, invite.ErrRefused) {
		return invite.State{}, err
	}
	return c.To, nil
}

// apply writes c in tx: the attempt row, the send's state, the rule's own
// effects, the webhook deliveries (as their payloads read the row as
// written) and, last, the funnel's counts of an invite's move (store/statsdb).
func (s *Store) apply(ctx context.Context, tx *sqlx.Tx, eventID string, c invite.Change) error {
	if !c.Changed() {
		return nil
	}
	var counted stats.Facts
	if c.Kind == invite.KindInvite {
		var err error
		if counted, err = s.stats.FactsTx(ctx, tx, eventID); err != nil {
			return err
		}
	}
	if err := s.applyEffects(ctx, tx, eventID, c); err != nil {
		return err
	}
	if c.Kind != invite.KindInvite {
		return nil
	}
	before, after := counted, counted
	before.Invite, after.Invite = c.From, c.To
	return s.stats.AddTx(ctx, tx, stats.Delta(&before, after))
}

// applyEffects is apply but for the counts.
func (s *Store) applyEffects(ctx context.Context, tx *sqlx.Tx, eventID string, c invite.Change) error {
	now := s.Now()
	if err := applyAttempt(ctx, tx, eventID, c.Kind, c.Attempt, now); err != nil {
		return err
	}
	n := c.To
	args := []any{eventID, n.Status, n.Reason, n.Medium, n.ScheduledFor, n.SentAt, n.Attempts, n.LastError, now}
	if c.Kind == invite.KindReminder {
		args = []any{eventID, n.Status, n.Reason, n.ScheduledFor, n.SentAt, now}
	}
	if err := s.invite.writeStmt(c.Kind).Exec(ctx, tx, args...); err != nil {
		return err
	}
	if c.Number != "" {
		if err := recordMobile(ctx, tx, eventID, c.Number); err != nil {
			return err
		}
	}
	if c.Suppress != "" {
		if err := s.suppressFor(ctx, tx, eventID, c.Address, c.Suppress); err != nil {
			return err
		}
	}
	if c.Run != "" {
		if err := eventdb.OrderRunTx(ctx, tx, eventID, c.Run, now); err != nil {
			return err
		}
	}
	return s.webhooks.EmitSendTx(ctx, tx, eventID, c)
}

// MarkScheduled records when the send of kind k is due (invite.Schedule);
// in any state the rule refuses, the send is returned unchanged (a
// cancelled invite stays cancelled, a reminder is planned once).
func (s *Store) MarkScheduled(ctx context.Context, k invite.Kind, eventID string, at time.Time) (invite.State, error) {
	at = at.UTC().Truncate(time.Millisecond)
	return s.step(ctx, k, eventID, func(_ *sqlx.Tx, cur sendState) (invite.Change, error) {
		return invite.Schedule(k, cur.State, at, cur.InviteStatus)
	})
}

// MarkSkipped records that the send will not go out, and why
// (invite.Skip).
func (s *Store) MarkSkipped(ctx context.Context, k invite.Kind, eventID string, reason invite.Reason) (invite.State, error) {
	return s.step(ctx, k, eventID, func(_ *sqlx.Tx, cur sendState) (invite.Change, error) {
		return invite.Skip(k, cur.State, reason)
	})
}

// MarkCancelled cancels a send that has not begun (invite.Cancel), for a
// cancel signal sent from the Temporal UI; the API cancels with
// CancelInvite before it signals, and then this changes nothing.
func (s *Store) MarkCancelled(ctx context.Context, k invite.Kind, eventID string) (invite.State, error) {
	return s.step(ctx, k, eventID, func(_ *sqlx.Tx, cur sendState) (invite.Change, error) {
		return invite.Cancel(k, cur.State)
	})
}

// GiveUp ends a send that will not be tried again (invite.GiveUp): an
// invite fails, a reminder is skipped; one left sending ends as
// delivery_uncertain. A send that ended already is returned unchanged, so
// this also reads back a verdict the send step recorded itself.
func (s *Store) GiveUp(ctx context.Context, k invite.Kind, eventID string, reason invite.Reason, lastError string) (invite.State, error) {
	return s.step(ctx, k, eventID, func(_ *sqlx.Tx, cur sendState) (invite.Change, error) {
		return invite.GiveUp(k, cur.State, reason, lastError)
	})
}

// FinishSend records how a claimed send ended (invite.Finish).
func (s *Store) FinishSend(ctx context.Context, k invite.Kind, eventID string, r invite.SendResult) (invite.State, error) {
	if !r.SentAt.IsZero() {
		r.SentAt = r.SentAt.UTC().Truncate(time.Millisecond)
	}
	return s.step(ctx, k, eventID, func(_ *sqlx.Tx, cur sendState) (invite.Change, error) {
		return invite.Finish(k, cur.State, r)
	})
}

// ClaimOptions are what a claim depends on besides the database.
type ClaimOptions struct {
	SMSEnabled bool // an SMS provider is configured
	// Mobile is the customer's number in E.164, as the caller normalised
	// it; "" when there is none or it is not a valid mobile number.
	Mobile string
}

// Claim is the outcome of ClaimSend.
type Claim struct {
	State invite.State
	// Send: the send is now marked sending; deliver it, then record the
	// outcome with FinishSend. Otherwise State is final for this attempt
	// (sent, skipped, cancelled, failed …) and nothing is sent.
	Send bool
	// Address is where the send goes: the email address, or the mobile
	// number for SMS.
	Address string
}

// ClaimSend is the record-before step of a send (invite.Claim). In one
// transaction, with the event's row locked, it reads the facts in the
// order of their cost, asking the rule after each read whether the send
// still goes out: the event type and the setting (active, medium,
// minDaysBetweenInvites) with the address and, for a reminder, whether a
// review exists; then, under the (account, address) advisory lock, the
// suppression list and the throttle; last the account's send quotas,
// which count the send.
func (s *Store) ClaimSend(ctx context.Context, k invite.Kind, eventID string, opts ClaimOptions) (Claim, error) {
	var address string
	c, err := s.change(ctx, k, eventID, func(tx *sqlx.Tx, cur sendState) (invite.Change, error) {
		if cur.Status != invite.Scheduled { // decided by the state alone
			return invite.Claim(k, cur.State, invite.ClaimFacts{})
		}
		var r claimRow
		if err := s.invite.claimRead.Get(ctx, tx, &r, eventID, k.StopsOnReview()); err != nil {
			return invite.Change{}, fmt.Errorf("read setting: %w", err)
		}
		f := invite.ClaimFacts{EventTypeActive: r.EventTypeActive, SettingActive: r.SettingActive, Medium: r.Medium,
			Address: suppressiondb.ListedAddress(invite.Email, r.Email), ProviderReady: r.Medium != invite.SMS || opts.SMSEnabled,
			Reviewed: r.Reviewed}
		if r.Medium == invite.SMS {
			f.Address = opts.Mobile
		}
		address = f.Address
		c, err := invite.Claim(k, cur.State, f)
		if err != nil || !c.Sends() {
			return c, err
		}
		window := time.Duration(r.MinDays) * 24 * time.Hour
		if !k.Throttled() {
			window = 0
		}
		if f.Suppressed, f.RecentlyInvited, err = s.mayReach(ctx, tx, eventID, r, f.Address, window); err != nil {
			return invite.Change{}, err
		}
		if c, err = invite.Claim(k, cur.State, f); err != nil || !c.Sends() {
			return c, err
		}
		// A send tried again after a transient failure was counted when it
		// was first claimed.
		if cur.Attempts == 0 {
			if f.OverQuota, err = s.countSend(ctx, tx, k, r.AccountID, accountdb.SendAddress(r.Medium, f.Address, f.Address)); err != nil {
				return invite.Change{}, err
			}
		}
		return invite.Claim(k, cur.State, f)
	})
	if err != nil && !errors.Is(err, invite.ErrRefused) {
		return Claim{}, err
	}
	claim := Claim{State: c.To, Send: c.Sends()}
	if claim.Send {
		claim.Address = address
	}
	return claim, nil
}

// countSend counts the send of kind k to address against the account's
// send quotas (an invite against the cap of sends to its address too,
// a reminder only against the daily quota) and returns "" or, when a
// quota is used up, the detail its skip (invite.QuotaExceeded) records.
func (s *Store) countSend(ctx context.Context, tx *sqlx.Tx, k invite.Kind, accountID, address string) (string, error) {
	kind := accountdb.SendInvite
	if k == invite.KindReminder {
		kind = accountdb.SendReminder
	}
	refused, err := s.accounts.CountSendTx(ctx, tx, accountID, address, kind)
	switch {
	case err != nil || refused == nil:
		return "", err
	case refused.Kind == accountdb.QuotaRecipient:
		return fmt.Sprintf("the account may send at most %d invites a day to one address", refused.Limit), nil
	}
	return fmt.Sprintf("the account's daily send quota of %d is used up", refused.Limit), nil
}

// claimRow is what a claim reads of the event and its setting.
type claimRow struct {
	AccountID       string        `db:"account_id"`
	Email           string        `db:"customer_email"`
	EventTypeActive bool          `db:"event_type_active"`
	SettingActive   bool          `db:"setting_active"`
	Medium          invite.Medium `db:"medium"`
	MinDays         int           `db:"min_days_between_invites"`
	Reviewed        bool          `db:"reviewed"`
}

// claimReadSQL reads a claimRow; $2 asks whether a review exists (read
// only for the kinds a review stops).
const claimReadSQL = `
	SELECT e.account_id, e.customer_email,
	       et.active AS event_type_active, s.active AS setting_active, s.medium, s.min_days_between_invites,
	       CASE WHEN $2::boolean THEN EXISTS (SELECT 1 FROM reviews r WHERE r.event_id = e.id) ELSE false END AS reviewed
	FROM events e
	JOIN event_types et ON et.id = e.event_type_id
	JOIN invite_settings s ON s.id = e.invite_setting_id
	WHERE e.id = $1`

// mayReach takes the (account, address) advisory lock for the rest of the
// transaction — so concurrent sends to one address, and a suppression of
// it, are serialised with this claim — and reads whether the address is
// suppressed and whether (throttle, a window > 0) another of the
// account's invites to it — by email to the address, by SMS to the number
// — was sent within the window or is being sent: it counts as sent until
// it is not, as the lock is released before that send ends.
func (s *Store) mayReach(ctx context.Context, tx *sqlx.Tx, eventID string, r claimRow, address string,
	window time.Duration) (suppressed, recent bool, err error) {
	if err := s.suppressions.LockAddressTx(ctx, tx, r.AccountID, address); err != nil {
		return false, false, fmt.Errorf("address lock: %w", err)
	}
	if suppressed, err = s.suppressions.ListedTx(ctx, tx, r.AccountID, address); err != nil {
		return false, false, fmt.Errorf("suppression list: %w", err)
	}
	if suppressed || window == 0 {
		return suppressed, false, nil
	}
	since := s.Now().Add(-window)
	if r.Medium == invite.SMS {
		recent, err = throttleSMS(ctx, tx, eventID, r.AccountID, address, since)
		return false, recent, err
	}
	if err := s.invite.recentlyInvited.Get(ctx, tx, &recent, r.AccountID, address, eventID, since); err != nil {
		return false, false, fmt.Errorf("throttle: %w", err)
	}
	return false, recent, nil
}

const recentlyInvitedSQL = `
	SELECT EXISTS (
		SELECT 1 FROM events
		WHERE account_id = $1 AND lower(customer_email) = $2 AND id <> $3
		  AND ((invite_status = 'sent' AND sent_at > $4) OR (invite_status = 'sending' AND updated_at > $4)))`

// suppressFor puts address on the suppression list of the event's
// account, for the medium of its setting.
func (s *Store) suppressFor(ctx context.Context, tx *sqlx.Tx, eventID, address string, reason invite.SuppressionReason) error {
	var r struct {
		AccountID string        `db:"account_id"`
		Medium    invite.Medium `db:"medium"`
	}
	if err := tx.GetContext(ctx, &r, `SELECT e.account_id, s.medium FROM events e
		JOIN invite_settings s ON s.id = e.invite_setting_id WHERE e.id = $1`, eventID); err != nil {
		return err
	}
	if _, _, err := s.suppressions.AddTx(ctx, tx, r.AccountID, address, r.Medium, reason, eventID); err != nil {
		return fmt.Errorf("suppress address: %w", err)
	}
	return nil
}
