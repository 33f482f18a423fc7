package reportdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// What the mail providers report of a message after their relay took it
// (the mailevents package reads the reports): every report is kept once
// in mail_events, the delivery status of the message in mail_deliveries
// moves by invite.NextDelivery, and a bounce or a complaint suppresses
// the address — each report, with its webhook and suppression, in one
// transaction.

// ErrReplay: the provider's once-signed value was seen before.
var ErrReplay = errors.New("replayed")

// MailReport is one provider report to apply (mailevents.Report).
type MailReport struct {
	Provider string
	ID       string // the provider's event ID
	Outcome  invite.MailOutcome
	EventID  string // "" when the message is not Touchpoint's
	Kind     invite.Kind
	Detail   string
	At       time.Time
}

// MailNonce is a value the provider signs once, with the time it signed.
type MailNonce struct {
	Provider string
	Nonce    string
	SignedAt time.Time
}

// MailResult is what applying one report did.
type MailResult string

// Mail results.
const (
	// MailUnknown: no event of Touchpoint's matches the message.
	MailUnknown MailResult = "unknown_message"
	// MailDuplicate: the report was applied before.
	MailDuplicate MailResult = "duplicate"
	// MailRecorded: kept in the attempt's history; the message's delivery
	// status stays (a deferral, or a report ranking below the status).
	MailRecorded MailResult = "recorded"
	// MailChanged: the message's delivery status changed.
	MailChanged MailResult = "changed"
)

// MailNonceKeep is how long a nonce is kept; the verifier refuses a
// signed time older than this.
const MailNonceKeep = 24 * time.Hour

// ApplyMailReports applies the reports of one request in one
// transaction, after taking nonce (when not nil). It returns what each
// report did, in order. Reports of one request run in the order given; a
// report of a message is applied whatever the order of the provider's
// events (the status only rises), and a repeated one changes nothing.
//
// A nonce seen before is the provider's retry of a request it did not
// see answered — it retries for hours — or a replay of a spent
// signature. When every report of the request was applied before (or
// names no message of Touchpoint's), it is the retry: the results say
// so and nothing changes. A report it would apply now is ErrReplay, and
// nothing is applied: the signature did not cover it.
func (s *Store) ApplyMailReports(ctx context.Context, nonce *MailNonce, reports []MailReport) ([]MailResult, error) {
	var out []MailResult
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		out = out[:0]
		seen := false
		if nonce != nil {
			res, err := tx.ExecContext(ctx, `INSERT INTO mail_event_nonces (provider, nonce, signed_at) VALUES ($1, $2, $3)
				ON CONFLICT (provider, nonce) DO NOTHING`, nonce.Provider, nonce.Nonce, nonce.SignedAt)
			if err != nil {
				return fmt.Errorf("take nonce: %w", err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			seen = n == 0
		}
		var counts []stats.KeyedCounts
		for _, r := range reports {
			res, err := s.applyMailReport(ctx, tx, r, &counts)
			if err != nil {
				return fmt.Errorf("%s report %s: %w", r.Provider, r.ID, err)
			}
			if seen && res != MailDuplicate && res != MailUnknown {
				return ErrReplay // rolls back what it applied
			}
			out = append(out, res)
		}
		return s.stats.AddTx(ctx, tx, stats.Merge(counts))
	})
	if err != nil {
		return nil, fmt.Errorf("mail reports: %w", err)
	}
	return out, nil
}

// mailEventTarget is what a report needs of its event.
type mailEventTarget struct {
	AccountID  string    `db:"account_id"`
	ReceivedAt time.Time `db:"received_at"` // the month its report rows are kept in
	Email      string    `db:"email"`
	Attempt    *int      `db:"attempt"`
}

// A change of the invite mail's status is counted in the funnel: the
// event's row is locked before the status is read and changed, so two
// reports of one message count once, and the change is added to counts,
// which the caller writes last.
func (s *Store) applyMailReport(ctx context.Context, tx *sqlx.Tx, r MailReport, counts *[]stats.KeyedCounts) (MailResult, error) {
	if r.EventID == "" || !r.Kind.Valid() || !r.Outcome.Valid() {
		return MailUnknown, nil
	}
	// FOR KEY SHARE: the event cannot be deleted before the report's rows
	// refer to it; the send's own row lock is not waited for.
	var ev mailEventTarget
	err := tx.GetContext(ctx, &ev, `SELECT account_id, received_at, lower(COALESCE(customer_email, '')) AS email,
		(SELECT max(a.n) FROM send_attempts a WHERE a.event_id = events.id AND a.kind = $2) AS attempt
		FROM events WHERE id = $1 FOR KEY SHARE`, r.EventID, r.Kind)
	if errors.Is(pg.Translate(err), pg.ErrNotFound) {
		return MailUnknown, nil
	}
	if err != nil {
		return "", err
	}
	now := s.Now()
	at := r.At.UTC().Truncate(time.Millisecond)
	// A report's id names one event, so its rows are in that event's
	// month, where (provider, provider_id) is unique.
	res, err := tx.ExecContext(ctx, `INSERT INTO mail_events (provider, provider_id, event_id, account_id, message, attempt,
			outcome, detail, occurred_at, received_at, event_received_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, NULLIF($8, ''), $9, $10, $11) ON CONFLICT DO NOTHING`,
		r.Provider, r.ID, r.EventID, ev.AccountID, r.Kind, ev.Attempt, r.Outcome, pg.Truncate(r.Detail, pg.MaxDetail), at, now,
		ev.ReceivedAt)
	if err != nil {
		return "", fmt.Errorf("keep report: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return MailDuplicate, err
	}
	result := MailRecorded
	if _, changes := invite.NextDelivery("", r.Outcome); changes {
		var counted *stats.Facts
		if r.Kind == invite.KindInvite {
			if err := s.stats.LockEventTx(ctx, tx, r.EventID); err != nil {
				return "", err
			}
			f, err := s.stats.FactsTx(ctx, tx, r.EventID)
			if err != nil {
				return "", err
			}
			counted = &f
		}
		// The status rises only (invite.NextDelivery, as SQL: the rank
		// of the status kept must be below the report's).
		res, err := tx.ExecContext(ctx, `INSERT INTO mail_deliveries AS d (event_id, message, status, provider, at, updated_at,
				event_received_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT ON CONSTRAINT mail_deliveries_pkey DO UPDATE
			SET status = EXCLUDED.status, provider = EXCLUDED.provider, at = EXCLUDED.at, updated_at = EXCLUDED.updated_at
			WHERE `+fmt.Sprintf(mailRank, "d.status")+` < `+fmt.Sprintf(mailRank, "EXCLUDED.status"),
			r.EventID, r.Kind, r.Outcome, r.Provider, at, now, ev.ReceivedAt)
		if err != nil {
			return "", fmt.Errorf("delivery status: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return "", err
		} else if n == 1 {
			result = MailChanged
			if counted != nil {
				after := *counted
				after.Delivery = string(r.Outcome)
				*counts = append(*counts, stats.Delta(counted, after)...)
			}
			if err := s.emitMailWebhook(ctx, tx, r, at); err != nil {
				return "", err
			}
		}
	}
	if reason := r.Outcome.Suppression(); reason != "" && ev.Email != "" {
		if _, _, err := s.suppressions.AddTx(ctx, tx, ev.AccountID, ev.Email, invite.Email, reason, r.EventID); err != nil {
			return "", fmt.Errorf("suppress address: %w", err)
		}
	}
	return result, nil
}

// mailRank is invite.MailOutcome's rank in SQL; a test holds the two
// together.
const mailRank = `CASE %s WHEN 'complained' THEN 3 WHEN 'bounced' THEN 2 WHEN 'delivered' THEN 1 ELSE 0 END`

// mailWebhookTypes are the webhooks of a changed delivery status.
var mailWebhookTypes = map[invite.MailOutcome]string{
	invite.MailDelivered:  webhookdb.InviteDelivered,
	invite.MailBounced:    webhookdb.InviteBounced,
	invite.MailComplained: webhookdb.InviteComplained,
}

// emitMailWebhook reports a message's new delivery status.
func (s *Store) emitMailWebhook(ctx context.Context, tx *sqlx.Tx, r MailReport, at time.Time) error {
	return s.webhooks.EmitEventTx(ctx, tx, r.EventID, mailWebhookTypes[r.Outcome], s.Now(), func(src webhookdb.Source) webhookdb.Fact {
		return webhookdb.DeliveryFact{Event: src, Message: r.Kind, Outcome: r.Outcome, Provider: r.Provider, At: at}
	})
}

// MailDelivery is a message's delivery status as the providers reported
// it.
type MailDelivery struct {
	Status   invite.MailOutcome `json:"status"`
	Provider string             `json:"provider"`
	At       time.Time          `json:"at"`
}

// MailDeliveryColumn is the delivery status of the invite's and the
// reminder's message of an event (a MailDelivery keyed by kind), for a
// read of events.
const MailDeliveryColumn = `(SELECT json_object_agg(d.message, json_build_object('status', d.status, 'provider', d.provider,
		'at', to_char(d.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')))
	 FROM mail_deliveries d WHERE d.event_id = events.id AND d.event_received_at = events.received_at) AS mail_delivery`

// MailEventsColumn is the reports kept for a send attempt, oldest first,
// for a read of send_attempts (a is the attempt).
const MailEventsColumn = `(SELECT json_agg(json_build_object('provider', m.provider, 'outcome', m.outcome,
		'detail', COALESCE(m.detail, ''), 'at', to_char(m.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
		ORDER BY m.occurred_at, m.provider_id)
	 FROM mail_events m WHERE m.event_id = a.event_id AND m.event_received_at = a.event_received_at
	   AND m.message = a.kind AND m.attempt = a.n)`

// AccountMail is an account's mail of the last 24 hours.
type AccountMail struct {
	AccountID  string `db:"account_id"`
	Sent       int    `db:"sent"`
	Complaints int    `db:"complaints"`
}

// MailLastDay counts, per account, the messages sent by email in the
// last 24 hours and the complaints received in that time; accounts with
// neither are left out.
func (s *Store) MailLastDay(ctx context.Context) ([]AccountMail, error) {
	var out []AccountMail
	since := s.Now().Add(-24 * time.Hour)
	err := s.db.SelectContext(ctx, &out, `
		SELECT account_id, sum(sent)::int AS sent, sum(complaints)::int AS complaints FROM (
			SELECT e.account_id, count(*) AS sent, 0 AS complaints
			FROM send_attempts a JOIN events e ON e.id = a.event_id
			WHERE a.outcome = 'sent' AND a.finished_at > $1 AND a.medium IS DISTINCT FROM 'sms'
			GROUP BY e.account_id
			UNION ALL
			SELECT account_id, 0, count(*) FROM mail_events
			WHERE outcome = 'complained' AND received_at > $1
			GROUP BY account_id) x
		GROUP BY account_id ORDER BY account_id`, since)
	if err != nil {
		return nil, fmt.Errorf("mail of the last day: %w", pg.Translate(err))
	}
	return out, nil
}

// ComplaintsSince counts the spam complaints the mail providers reported
// on the account's mail since the given time.
func (s *Store) ComplaintsSince(ctx context.Context, accountID string, since time.Time) (int64, error) {
	var n int64
	err := s.db.GetContext(ctx, &n, `SELECT count(*) FROM mail_events
		WHERE outcome = 'complained' AND received_at > $2 AND account_id = $1`, accountID, since)
	if err != nil {
		return 0, fmt.Errorf("complaints: %w", pg.Translate(err))
	}
	return n, nil
}
