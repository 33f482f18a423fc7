package accountdb

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Quotas bound what one account may do with the shared service, so that
// one tenant (or a stolen client secret) cannot turn it against people:
// mail anyone at any rate, or fill the database. Zero means no limit.
type Quotas struct {
	// DailySends is how many invites and reminders the account may send
	// per UTC day.
	DailySends int `db:"daily_sends" json:"dailySends"`
	// RecipientDailyCap is how many invites the account may send to one
	// address per UTC day, whatever the invite settings. Test sends of
	// its templates count too. Reminders do not: each invite has at most
	// one, which follows it days later.
	RecipientDailyCap int `db:"recipient_daily_cap" json:"recipientDailyCap"`
	// Channels, EventTypes and WebhookEndpoints bound how many of each
	// the account may have.
	Channels         int `db:"channels" json:"channels"`
	EventTypes       int `db:"event_types" json:"eventTypes"`
	WebhookEndpoints int `db:"webhook_endpoints" json:"webhookEndpoints"`
	// DailyEvents is how many events the account may have accepted per
	// UTC day (POST /events and each event of POST /events/batch).
	DailyEvents int `db:"daily_events" json:"dailyEvents"`
}

// Quota kinds, as errors, invite details and metrics name them.
const (
	QuotaDailySends = "daily_sends"
	QuotaRecipient  = "recipient_daily_cap"
	QuotaChannels   = "channels"
	QuotaEventTypes = "event_types"
	QuotaWebhooks   = "webhook_endpoints"
	QuotaEvents     = "daily_events"
)

// ErrQuotaExceeded: the account has as many of a resource as its quota
// allows. Errors wrap it in a *QuotaError that says which.
var ErrQuotaExceeded = errors.New("quota exceeded")

// QuotaError is a refusal by a quota.
type QuotaError struct {
	Kind  string // QuotaChannels, QuotaEventTypes, QuotaWebhooks, QuotaEvents, …
	Limit int
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("%s: the account's quota of %d is reached", e.Kind, e.Limit)
}

func (e *QuotaError) Unwrap() error { return ErrQuotaExceeded }

// QuotaUpdate changes an account's own quotas. A nil field keeps its
// value; a negative one clears it, so the default (Store.Quotas) applies.
type QuotaUpdate struct {
	DailySends, RecipientDailyCap, Channels, EventTypes, WebhookEndpoints, DailyEvents *int
}

// Any reports whether the update changes anything.
func (u QuotaUpdate) Any() bool {
	return u.DailySends != nil || u.RecipientDailyCap != nil || u.Channels != nil || u.EventTypes != nil ||
		u.WebhookEndpoints != nil || u.DailyEvents != nil
}

// AccountQuotas returns the quotas in force for an account: its own where
// set, the store's defaults elsewhere. An unknown account is pg.ErrNotFound.
func (s *Store) AccountQuotas(ctx context.Context, accountID string) (Quotas, error) {
	return s.QuotasTx(ctx, s.db, accountID)
}

// SetAccountQuotas changes the account's own quotas and returns those in
// force afterwards.
func (s *Store) SetAccountQuotas(ctx context.Context, accountID string, u QuotaUpdate) (Quotas, error) {
	// A NULL parameter keeps the column; -1 makes it NULL (the default).
	arg := func(p *int) any {
		if p == nil {
			return nil
		}
		return max(*p, -1)
	}
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if err := LockTx(ctx, tx, accountID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO account_quotas AS q (account_id, daily_sends, recipient_daily_cap, channels, event_types,
				webhook_endpoints, daily_events, updated_at)
			VALUES ($1, NULLIF($2::int, -1), NULLIF($3::int, -1), NULLIF($4::int, -1), NULLIF($5::int, -1),
				NULLIF($7::int, -1), NULLIF($8::int, -1), $6)
			ON CONFLICT (account_id) DO UPDATE SET
				daily_sends         = CASE WHEN $2::int IS NULL THEN q.daily_sends ELSE NULLIF($2::int, -1) END,
				recipient_daily_cap = CASE WHEN $3::int IS NULL THEN q.recipient_daily_cap ELSE NULLIF($3::int, -1) END,
				channels            = CASE WHEN $4::int IS NULL THEN q.channels ELSE NULLIF($4::int, -1) END,
				event_types         = CASE WHEN $5::int IS NULL THEN q.event_types ELSE NULLIF($5::int, -1) END,
				webhook_endpoints   = CASE WHEN $7::int IS NULL THEN q.webhook_endpoints ELSE NULLIF($7::int, -1) END,
				daily_events        = CASE WHEN $8::int IS NULL THEN q.daily_events ELSE NULLIF($8::int, -1) END,
				updated_at          = $6`,
			accountID, arg(u.DailySends), arg(u.RecipientDailyCap), arg(u.Channels), arg(u.EventTypes), s.Now(),
			arg(u.WebhookEndpoints), arg(u.DailyEvents))
		if err != nil {
			return fmt.Errorf("set quotas: %w", err)
		}
		return nil
	})
	if err != nil {
		return Quotas{}, err
	}
	s.exhausted.forget(accountID) // other processes see it within ExhaustedFor
	return s.AccountQuotas(ctx, accountID)
}

// QuotasTx reads the quotas in force with q (the pool or a tx).
func (s *Store) QuotasTx(ctx context.Context, q sqlx.QueryerContext, accountID string) (Quotas, error) {
	d := s.Quotas
	var out Quotas
	err := sqlx.GetContext(ctx, q, &out, `
		SELECT COALESCE(q.daily_sends, $2) AS daily_sends, COALESCE(q.recipient_daily_cap, $3) AS recipient_daily_cap,
		       COALESCE(q.channels, $4) AS channels, COALESCE(q.event_types, $5) AS event_types,
		       COALESCE(q.webhook_endpoints, $6) AS webhook_endpoints, COALESCE(q.daily_events, $7) AS daily_events
		FROM accounts a LEFT JOIN account_quotas q ON q.account_id = a.id
		WHERE a.id = $1`, accountID, d.DailySends, d.RecipientDailyCap, d.Channels, d.EventTypes, d.WebhookEndpoints, d.DailyEvents)
	if err != nil {
		return Quotas{}, fmt.Errorf("read quotas: %w", pg.Translate(err))
	}
	return out, nil
}

// resourceTables are the tables whose rows a resource quota counts, by
// kind.
var resourceTables = map[string]string{QuotaChannels: "channels", QuotaEventTypes: "event_types", QuotaWebhooks: "webhook_endpoints"}

// CheckResourceQuotaTx refuses one more channel, event type or webhook
// endpoint (kind) when the account has as many as its quota allows. The
// caller holds the account lock (LockTx), so concurrent creations cannot
// both pass.
func (s *Store) CheckResourceQuotaTx(ctx context.Context, tx *sqlx.Tx, accountID, kind string) error {
	q, err := s.QuotasTx(ctx, tx, accountID)
	if err != nil {
		return err
	}
	table := resourceTables[kind]
	limit := map[string]int{QuotaChannels: q.Channels, QuotaEventTypes: q.EventTypes, QuotaWebhooks: q.WebhookEndpoints}[kind]
	if limit <= 0 {
		return nil
	}
	var n int
	if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM `+table+` WHERE account_id = $1`, accountID); err != nil {
		return fmt.Errorf("count %s: %w", table, err)
	}
	if n >= limit {
		return s.Refuse(kind, limit)
	}
	return nil
}

// SendKind is what a send quota counts.
type SendKind int

const (
	// SendInvite: an invite (or a test send of a template) counts against
	// the daily send quota and the daily cap of sends to its address.
	SendInvite SendKind = iota
	// SendReminder: a reminder counts against the daily send quota only
	// (sender quotas count it; it belongs to its invite, which the cap
	// already counted).
	SendReminder
)

// CountSendTx counts a send that is about to begin against the account's
// daily send quota and, for SendInvite, against the daily cap of sends
// to its address (SendAddress). When one is used up it counts nothing
// and returns the *QuotaError (QuotaRecipient or QuotaDailySends) that
// refuses the send, told to OnQuotaExceeded.
//
// It runs inside the caller's transaction: each count is a conditional
// upsert of a per-day counter row, whose row lock serialises concurrent
// sends of the same account (and address) until they commit, so two of
// them can never both take the last unit — whether or not the caller
// also holds the (account, address) advisory lock. A transaction that
// rolls back takes its counts with it.
func (s *Store) CountSendTx(ctx context.Context, tx *sqlx.Tx, accountID, address string, kind SendKind) (*QuotaError, error) {
	q, err := s.QuotasTx(ctx, tx, accountID)
	if err != nil {
		return nil, err
	}
	day := s.Now().UTC().Format(time.DateOnly)
	capped := kind == SendInvite && q.RecipientDailyCap > 0
	if capped {
		counted, err := countRecipientSend(ctx, tx, accountID, address, day, q.RecipientDailyCap)
		switch {
		case err != nil:
			return nil, err
		case !counted:
			return s.Refuse(QuotaRecipient, q.RecipientDailyCap), nil
		}
	}
	if q.DailySends > 0 {
		counted, err := countDailySend(ctx, tx, accountID, day, q.DailySends)
		switch {
		case err != nil:
			return nil, err
		case !counted:
			if capped { // give back the address's count: nothing is sent
				hash := sha256.Sum256([]byte(address))
				if _, err := tx.ExecContext(ctx, `UPDATE recipient_daily_sends SET sends = sends - 1
					WHERE account_id = $1 AND address_hash = $2 AND day = $3::date`, accountID, hash[:], day); err != nil {
					return nil, fmt.Errorf("uncount the send to the address: %w", err)
				}
			}
			return s.Refuse(QuotaDailySends, q.DailySends), nil
		}
	}
	return nil, nil
}

// countRecipientSend counts one send of the account to address (as
// sendAddress spells it) on day (YYYY-MM-DD, UTC) unless limit sends are
// counted already; counted is false then. Only the address's hash is
// kept.
func countRecipientSend(ctx context.Context, tx *sqlx.Tx, accountID, address, day string, limit int) (counted bool, err error) {
	hash := sha256.Sum256([]byte(address))
	return countUnderLimit(ctx, tx, "sends to the address", `
		INSERT INTO recipient_daily_sends AS r (account_id, address_hash, day, sends) VALUES ($1, $2, $3::date, 1)
		ON CONFLICT (account_id, address_hash, day) DO UPDATE SET sends = r.sends + 1 WHERE r.sends < $4
		RETURNING sends`, accountID, hash[:], day, limit)
}

// countDailySend counts one send of the account on day (YYYY-MM-DD, UTC)
// unless limit sends are counted already; counted is false then.
func countDailySend(ctx context.Context, tx *sqlx.Tx, accountID, day string, limit int) (counted bool, err error) {
	return countUnderLimit(ctx, tx, "the account's sends", `
		INSERT INTO account_daily_sends AS a (account_id, day, sends) VALUES ($1, $2::date, 1)
		ON CONFLICT (account_id, day) DO UPDATE SET sends = a.sends + 1 WHERE a.sends < $3
		RETURNING sends`, accountID, day, limit)
}

// countUnderLimit runs a conditional upsert of a per-day counter row that
// returns a row only when it counted. The row's lock serialises
// concurrent counts until the caller's transaction ends.
func countUnderLimit(ctx context.Context, tx *sqlx.Tx, what, query string, args ...any) (bool, error) {
	var n int
	err := tx.GetContext(ctx, &n, query, args...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("count %s: %w", what, err)
	}
	return true, nil
}

// SendAddress is the address a send quota counts, by medium: the
// lower-cased email, or the mobile number as stored (E.164).
func SendAddress(m invite.Medium, email, mobile string) string {
	if m == invite.SMS {
		return "sms:" + mobile
	}
	return "email:" + strings.ToLower(email)
}

// Refuse is the refusal by the quota kind of limit, told to
// OnQuotaExceeded: every refusal by a quota is counted once, here.
func (s *Store) Refuse(kind string, limit int) *QuotaError {
	if s.OnQuotaExceeded != nil {
		s.OnQuotaExceeded(kind)
	}
	return &QuotaError{Kind: kind, Limit: limit}
}
