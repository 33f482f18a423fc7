package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sendtime"
)

const inviteStateColumns = `invite_status, COALESCE(invite_reason, '') AS invite_reason,
	COALESCE(invite_medium, '') AS invite_medium, scheduled_for, sent_at, attempts,
	COALESCE(last_error, '') AS last_error`

// inviteStatements are the statements every invite runs: its plan, the
// row lock and write of each transition, the claim's reads and throttle,
// its content. Prepared once like the accept statements, each is one
// round trip without planning (an unprepared query with arguments is two,
// planned each time).
type inviteStatements struct {
	plan, lockState, writeState, claimRead, addressLock, suppressed, recentlyInvited, content preparedStmt
}

func newInviteStatements() *inviteStatements {
	return &inviteStatements{
		plan:            preparedStmt{query: planSQL},
		lockState:       preparedStmt{query: `SELECT ` + inviteStateColumns + ` FROM events WHERE id = $1 FOR UPDATE`},
		writeState:      preparedStmt{query: writeStateSQL},
		claimRead:       preparedStmt{query: claimReadSQL},
		addressLock:     preparedStmt{query: `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`},
		suppressed:      preparedStmt{query: `SELECT EXISTS (SELECT 1 FROM suppressions WHERE account_id = $1 AND address = $2)`},
		recentlyInvited: preparedStmt{query: recentlyInvitedSQL},
		content:         preparedStmt{query: contentSQL},
	}
}

// prepareForTx makes the statements that run inside transactions ready
// before one begins (see preparedStmt.on).
func (st *inviteStatements) prepareForTx(ctx context.Context, db *sqlx.DB) error {
	for _, p := range []*preparedStmt{&st.lockState, &st.writeState, &st.claimRead, &st.addressLock, &st.suppressed, &st.recentlyInvited} {
		if _, err := p.get(ctx, db); err != nil {
			return err
		}
	}
	return nil
}

// LoadInviteState returns an event's invite state.
func (s *Store) LoadInviteState(ctx context.Context, eventID string) (invite.State, error) {
	var st invite.State
	err := s.db.GetContext(ctx, &st, `SELECT `+inviteStateColumns+` FROM events WHERE id = $1`, eventID)
	return st, translate(err)
}

const planSQL = `
	SELECT e.invite_status, et.active AS event_type_active, s.active AS setting_active,
	       e.received_at, e.transaction_date,
	       COALESCE(to_char(e.estimated_delivery_date, 'YYYY-MM-DD'), '') AS delivery_date,
	       e.delay, e.delay_from, e.send_window
	FROM events e
	JOIN event_types et ON et.id = e.event_type_id
	JOIN invite_settings s ON s.id = e.invite_setting_id
	WHERE e.id = $1`

// LoadInvitePlan returns the event's schedule copy (SPEC §10) and whether
// its event type and invite setting are active now.
func (s *Store) LoadInvitePlan(ctx context.Context, eventID string) (invite.Plan, error) {
	var r struct {
		Status          invite.Status `db:"invite_status"`
		EventTypeActive bool          `db:"event_type_active"`
		SettingActive   bool          `db:"setting_active"`
		ReceivedAt      time.Time     `db:"received_at"`
		TransactionDate time.Time     `db:"transaction_date"`
		DeliveryDate    string        `db:"delivery_date"`
		Delay           string        `db:"delay"`
		DelayFrom       string        `db:"delay_from"`
		SendWindow      []byte        `db:"send_window"`
	}
	if err := s.getPrepared(ctx, nil, &s.invite.plan, &r, eventID); err != nil {
		return invite.Plan{}, fmt.Errorf("load invite plan: %w", translate(err))
	}
	p := invite.Plan{Status: r.Status, EventTypeActive: r.EventTypeActive, SettingActive: r.SettingActive,
		Plan: sendtime.Plan{ReceivedAt: r.ReceivedAt.UTC(), TransactionDate: r.TransactionDate.UTC(),
			DeliveryDate: r.DeliveryDate, Delay: r.Delay, DelayFrom: r.DelayFrom}}
	if r.SendWindow != nil {
		p.Plan.SendWindow = new(sendtime.SendWindow)
		if err := json.Unmarshal(r.SendWindow, p.Plan.SendWindow); err != nil {
			return invite.Plan{}, fmt.Errorf("event %s: decode send_window: %w", eventID, err)
		}
	}
	return p, nil
}

// changeInvite locks the event's row, hands its invite state to next and
// writes what next returns when it reports a change. Every transition of
// the invite state machine goes through here, so each one is ordered
// against the API's cancel (which locks the same row).
func (s *Store) changeInvite(ctx context.Context, eventID string,
	next func(tx *sqlx.Tx, cur invite.State) (invite.State, bool, error)) (invite.State, error) {
	if err := s.invite.prepareForTx(ctx, s.db); err != nil {
		return invite.State{}, fmt.Errorf("invite %s: %w", eventID, translate(err))
	}
	var out invite.State
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var cur invite.State
		if err := s.getPrepared(ctx, tx, &s.invite.lockState, &cur, eventID); err != nil {
			return err
		}
		n, changed, err := next(tx, cur)
		if err != nil || !changed {
			out = cur
			return err
		}
		out = n
		if err := s.trackInviteAttempt(ctx, tx, eventID, cur, n); err != nil {
			return err
		}
		if err := s.execPrepared(ctx, tx, &s.invite.writeState,
			eventID, n.Status, n.Reason, n.Medium, n.ScheduledFor, n.SentAt, n.Attempts, n.LastError, s.Now()); err != nil {
			return err
		}
		return s.emitInviteWebhook(ctx, tx, eventID, cur.Status, n.Status)
	})
	if err != nil {
		return invite.State{}, fmt.Errorf("invite %s: %w", eventID, err)
	}
	return out, nil
}

const writeStateSQL = `
	UPDATE events SET invite_status = $2, invite_reason = NULLIF($3, ''),
	       invite_medium = NULLIF($4, ''), scheduled_for = $5, sent_at = $6, attempts = $7,
	       last_error = NULLIF($8, ''), updated_at = $9
	WHERE id = $1`

// MarkInviteScheduled records the send time: pending, failed (a retry run
// or a reset) and scheduled invites become scheduled; any other state is
// returned unchanged (a cancelled invite stays cancelled).
func (s *Store) MarkInviteScheduled(ctx context.Context, eventID string, at time.Time) (invite.State, error) {
	at = at.UTC().Truncate(time.Millisecond)
	return s.changeInvite(ctx, eventID, func(_ *sqlx.Tx, cur invite.State) (invite.State, bool, error) {
		if !slices.Contains([]invite.Status{invite.Pending, invite.Failed, invite.Scheduled}, cur.Status) {
			return cur, false, nil
		}
		cur.Status, cur.Reason, cur.ScheduledFor = invite.Scheduled, "", &at
		return cur, true, nil
	})
}

// MarkInviteSkipped records that no invite is sent and why; only a
// pending, scheduled or failed invite changes.
func (s *Store) MarkInviteSkipped(ctx context.Context, eventID string, reason invite.Reason) (invite.State, error) {
	return s.changeInvite(ctx, eventID, func(_ *sqlx.Tx, cur invite.State) (invite.State, bool, error) {
		if !slices.Contains([]invite.Status{invite.Pending, invite.Scheduled, invite.Failed}, cur.Status) {
			return cur, false, nil
		}
		cur.Status, cur.Reason = invite.Skipped, reason
		return cur, true, nil
	})
}

// MarkInviteCancelled cancels a pending or scheduled invite, for a cancel
// signal sent from the Temporal UI (the API cancels with CancelInvite
// before it signals). Any other state is returned unchanged: a send that
// began is not cancelled.
func (s *Store) MarkInviteCancelled(ctx context.Context, eventID string) (invite.State, error) {
	return s.changeInvite(ctx, eventID, func(_ *sqlx.Tx, cur invite.State) (invite.State, bool, error) {
		if !slices.Contains([]invite.Status{invite.Pending, invite.Scheduled}, cur.Status) {
			return cur, false, nil
		}
		cur.Status, cur.Reason = invite.Cancelled, ""
		return cur, true, nil
	})
}

// MarkInviteFailed gives up on an invite: a pending or scheduled one fails
// with reason and lastError; one left sending fails as delivery_uncertain
// (the send may have happened). Any other state is returned unchanged.
func (s *Store) MarkInviteFailed(ctx context.Context, eventID string, reason invite.Reason, lastError string) (invite.State, error) {
	return s.changeInvite(ctx, eventID, func(_ *sqlx.Tx, cur invite.State) (invite.State, bool, error) {
		switch cur.Status {
		case invite.Pending, invite.Scheduled:
			cur.Status, cur.Reason, cur.LastError = invite.Failed, reason, lastError
		case invite.Sending:
			cur.Status, cur.Reason, cur.LastError = invite.Failed, invite.DeliveryUncertain, uncertain(lastError)
		default:
			return cur, false, nil
		}
		return cur, true, nil
	})
}

func uncertain(detail string) string {
	const msg = "a send attempt was interrupted after it began; the invite may have been delivered, so it is not sent again"
	if detail == "" {
		return msg
	}
	return msg + ": " + detail
}

// ClaimOptions are what a claim depends on besides the database.
type ClaimOptions struct {
	SMSEnabled bool // an SMS provider is configured
	// Mobile is the customer's number in E.164, as the caller normalised
	// it; "" when there is none or it is not a valid mobile number.
	Mobile string
}

// Claim is the outcome of ClaimInviteSend.
type Claim struct {
	State invite.State
	// Send: the invite is now marked sending; deliver it, then record the
	// outcome with FinishInviteSend. Otherwise State is final for this
	// attempt (sent, skipped, cancelled, failed …) and nothing is sent.
	Send bool
	// Address is where the invite goes: the email address, or the mobile
	// number for SMS.
	Address string
}

// ClaimInviteSend is the record-before step of a send (SPEC §10). In one
// transaction, with the event's row locked and the (account, address)
// advisory lock held, it checks that the invite is still scheduled,
// re-reads the event type and setting (active, medium,
// minDaysBetweenInvites), checks the address, the suppression list and the
// throttle, and marks the invite sending (attempts + 1). An invite found
// sending was left by an attempt that crashed mid-send: it fails as
// delivery_uncertain.
func (s *Store) ClaimInviteSend(ctx context.Context, eventID string, opts ClaimOptions) (Claim, error) {
	var claim Claim
	st, err := s.changeInvite(ctx, eventID, func(tx *sqlx.Tx, cur invite.State) (invite.State, bool, error) {
		switch cur.Status {
		case invite.Scheduled:
		case invite.Sending:
			cur.Status, cur.Reason, cur.LastError = invite.Failed, invite.DeliveryUncertain, uncertain("")
			return cur, true, nil
		default:
			return cur, false, nil
		}
		var r claimRow
		if err := s.getPrepared(ctx, tx, &s.invite.claimRead, &r, eventID); err != nil {
			return cur, false, fmt.Errorf("read setting: %w", err)
		}
		skip := func(reason invite.Reason) (invite.State, bool, error) {
			cur.Status, cur.Reason = invite.Skipped, reason
			return cur, true, nil
		}
		cur.Medium = r.Medium
		address := lowerEmail(r.Email)
		if r.Medium == invite.SMS {
			address = opts.Mobile
		}
		switch {
		case !r.EventTypeActive:
			return skip(invite.EventTypeInactive)
		case !r.SettingActive:
			return skip(invite.SettingInactive)
		case address == "":
			return skip(invite.NoAddress)
		case r.Medium == invite.SMS && !opts.SMSEnabled:
			cur.Status, cur.Reason, cur.LastError = invite.Failed, invite.NoProvider, "no SMS provider configured"
			return cur, true, nil
		}
		reason, err := s.mayReach(ctx, tx, eventID, r, address)
		if err != nil {
			return cur, false, err
		}
		if reason != "" {
			return skip(reason)
		}
		if reason, detail, err := s.quotaReason(ctx, tx, r.AccountID, sendAddress(r.Medium, address, address), quotaInvite, cur.Attempts); err != nil || reason != "" {
			cur.Status, cur.Reason, cur.LastError = invite.Skipped, reason, detail
			return cur, err == nil, err
		}
		if r.Medium == invite.SMS {
			if err := s.recordMobile(ctx, tx, eventID, address); err != nil {
				return cur, false, err
			}
		}
		cur.Status, cur.Reason, cur.Attempts = invite.Sending, "", cur.Attempts+1
		claim.Send, claim.Address = true, address
		return cur, true, nil
	})
	claim.State = st
	return claim, err
}

// claimRow is what a claim reads of the event and its setting.
type claimRow struct {
	AccountID       string        `db:"account_id"`
	Email           string        `db:"customer_email"`
	EventTypeActive bool          `db:"event_type_active"`
	SettingActive   bool          `db:"setting_active"`
	Medium          invite.Medium `db:"medium"`
	MinDays         int           `db:"min_days_between_invites"`
}

const claimReadSQL = `
	SELECT e.account_id, e.customer_email,
	       et.active AS event_type_active, s.active AS setting_active, s.medium, s.min_days_between_invites
	FROM events e
	JOIN event_types et ON et.id = e.event_type_id
	JOIN invite_settings s ON s.id = e.invite_setting_id
	WHERE e.id = $1`

// mayReach takes the (account, address) advisory lock for the rest of the
// transaction — so concurrent sends to one address, and a suppression of
// it, are serialised with this claim — and returns why the address may
// not be sent to now: it is suppressed, or (minDaysBetweenInvites) another
// of the account's invites to it — by email to the address, by SMS to the
// number — was sent within the window or is being sent (it counts as sent until it is not: the lock is released
// before that send ends). "" means it may.
func (s *Store) mayReach(ctx context.Context, tx *sqlx.Tx, eventID string, r claimRow, address string) (invite.Reason, error) {
	if err := s.execPrepared(ctx, tx, &s.invite.addressLock, suppressionLockKey(r.AccountID, address)); err != nil {
		return "", fmt.Errorf("address lock: %w", err)
	}
	var suppressed bool
	if err := s.getPrepared(ctx, tx, &s.invite.suppressed, &suppressed, r.AccountID, address); err != nil {
		return "", fmt.Errorf("suppression list: %w", err)
	}
	if suppressed {
		return invite.Suppressed, nil
	}
	if r.MinDays == 0 {
		return "", nil
	}
	since := s.Now().Add(-time.Duration(r.MinDays) * 24 * time.Hour)
	if r.Medium == invite.SMS {
		return s.throttleSMS(ctx, tx, eventID, r.AccountID, address, since)
	}
	var recent bool
	if err := s.getPrepared(ctx, tx, &s.invite.recentlyInvited, &recent, r.AccountID, address, eventID, since); err != nil {
		return "", fmt.Errorf("throttle: %w", err)
	}
	if recent {
		return invite.RecentlyInvited, nil
	}
	return "", nil
}

const recentlyInvitedSQL = `
	SELECT EXISTS (
		SELECT 1 FROM events
		WHERE account_id = $1 AND lower(customer_email) = $2 AND id <> $3
		  AND ((invite_status = 'sent' AND sent_at > $4) OR (invite_status = 'sending' AND updated_at > $4)))`

// SendOutcome is how a claimed send ended.
type SendOutcome struct {
	SentAt time.Time     // non-zero: delivered at this time
	Retry  bool          // a transient failure: back to scheduled, to be tried again
	Reason invite.Reason // otherwise: failed with this reason …
	Error  string        // … and this error (also kept as last_error on a retry)
	// Suppress, when set, puts Address on the account's suppression list
	// with this reason: the provider refused the address itself for good
	// (bounced), or the customer had opted out there (unsubscribed).
	Suppress invite.SuppressionReason
	Address  string
}

// FinishInviteSend records the outcome of a claimed send. Only an invite
// still sending changes — except that a delivery always wins over an
// earlier verdict of delivery_uncertain, as the record of a sent invite
// must not be lost.
func (s *Store) FinishInviteSend(ctx context.Context, eventID string, o SendOutcome) (invite.State, error) {
	return s.changeInvite(ctx, eventID, func(tx *sqlx.Tx, cur invite.State) (invite.State, bool, error) {
		uncertainFail := cur.Status == invite.Failed && cur.Reason == invite.DeliveryUncertain
		switch {
		case !o.SentAt.IsZero() && (cur.Status == invite.Sending || uncertainFail):
			at := o.SentAt.UTC().Truncate(time.Millisecond)
			cur.Status, cur.Reason, cur.SentAt = invite.Sent, "", &at
		case cur.Status != invite.Sending || !o.SentAt.IsZero():
			return cur, false, nil
		case o.Retry:
			cur.Status, cur.LastError = invite.Scheduled, o.Error
		default:
			cur.Status, cur.Reason, cur.LastError = invite.Failed, o.Reason, o.Error
			if err := s.suppressFor(ctx, tx, eventID, o); err != nil {
				return cur, false, err
			}
		}
		return cur, true, nil
	})
}

// suppressFor puts o.Address on the suppression list of the event's
// account when o asks for it.
func (s *Store) suppressFor(ctx context.Context, tx *sqlx.Tx, eventID string, o SendOutcome) error {
	if o.Suppress == "" || o.Address == "" {
		return nil
	}
	var r struct {
		AccountID string        `db:"account_id"`
		Medium    invite.Medium `db:"medium"`
	}
	if err := tx.GetContext(ctx, &r, `SELECT e.account_id, s.medium FROM events e
		JOIN invite_settings s ON s.id = e.invite_setting_id WHERE e.id = $1`, eventID); err != nil {
		return err
	}
	if _, _, err := s.addSuppression(ctx, tx, r.AccountID, o.Address, r.Medium, o.Suppress, eventID); err != nil {
		return fmt.Errorf("suppress address: %w", err)
	}
	return nil
}

// lowerEmail is an email address as the suppression list and the
// throttle compare it.
func lowerEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// InviteContent is what rendering and addressing an invite needs: the
// customer's data, kept in PostgreSQL only (never in Temporal).
type InviteContent struct {
	EventID   string
	AccountID string
	Email     string
	FirstName string
	LastName  string
	Mobile    string
	Locale    string // defaultLocale as sent, e.g. "de_AT"; may be ""
	Products  []InviteProduct
	Account   Account // the shop: its name and branding
	// SentAt is when the invite was last sent; nil while it never was.
	SentAt *time.Time
}

const contentSQL = `
	SELECT e.account_id, e.customer_email, e.payload, e.sent_at,
	       a.name, COALESCE(a.display_name, '') AS display_name, COALESCE(a.logo_url, '') AS logo_url,
	       COALESCE(a.brand_color, '') AS brand_color, COALESCE(a.reply_to, '') AS reply_to, a.created_at
	FROM events e JOIN accounts a ON a.id = e.account_id
	WHERE e.id = $1`

// InviteProduct is a product as an invite shows it.
type InviteProduct struct {
	Name     string `json:"name"`
	URL      string `json:"url"`
	ImageURL string `json:"imageUrl"`
}

// LoadInviteContent reads the event's customer, products and locale.
func (s *Store) LoadInviteContent(ctx context.Context, eventID string) (InviteContent, error) {
	var r struct {
		AccountID string     `db:"account_id"`
		Email     string     `db:"customer_email"`
		Payload   []byte     `db:"payload"`
		SentAt    *time.Time `db:"sent_at"`
		Account
	}
	if err := s.getPrepared(ctx, nil, &s.invite.content, &r, eventID); err != nil {
		return InviteContent{}, fmt.Errorf("load invite content: %w", translate(err))
	}
	var p struct {
		Customer struct {
			FirstName string `json:"firstName"`
			LastName  string `json:"lastName"`
			Mobile    string `json:"mobile"`
		} `json:"customer"`
		DefaultLocale string          `json:"defaultLocale"`
		Products      []InviteProduct `json:"products"`
	}
	if err := json.Unmarshal(r.Payload, &p); err != nil {
		return InviteContent{}, fmt.Errorf("event %s: decode payload: %w", eventID, err)
	}
	r.Account.ID = r.AccountID
	return InviteContent{EventID: eventID, AccountID: r.AccountID, Email: r.Email,
		FirstName: p.Customer.FirstName, LastName: p.Customer.LastName, Mobile: p.Customer.Mobile,
		Locale: p.DefaultLocale, Products: p.Products, Account: r.Account, SentAt: r.SentAt}, nil
}
