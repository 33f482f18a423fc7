package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/invite"
)

// Erasure honours a customer's request to have their data erased (SPEC
// §11.8) in one transaction: their pending invites and reminders are
// cancelled, as the API's cancel decides them, and the customer's email,
// name, postal address and mobile leave every event of theirs, together
// with every other copy Touchpoint keeps in PostgreSQL — the searchable
// email column, masked addresses in error texts and attempt details,
// idempotency keys (chosen by the client, and stored with a hash of a
// body that held the address), and the address wherever else it was
// written into the event (metadata, references) or a review's comment.
//
// Kept on purpose: the events themselves (IDs, statuses, products, the
// client's customer reference, which is not personal data to Touchpoint
// and is what the shop may erase by), the reviews, and the suppression
// list. A suppression is the record of the customer's wish not to be
// contacted, or of an address that bounces; dropping it would let the
// next event invite them again.

// ErrCustomerKey: EraseCustomer needs exactly one of Email and Reference.
var ErrCustomerKey = errors.New("name the customer by exactly one of email and reference")

// CustomerKey names a customer: by the email address of their events
// (compared case-insensitively) or by the client's customer reference.
type CustomerKey struct {
	Email     string
	Reference string
}

// Erasure is what EraseCustomer did.
type Erasure struct {
	// Events is how many events had the customer's data erased now
	// (events erased before are not counted again).
	Events int
	// InvitesCancelled and RemindersCancelled were pending or scheduled.
	InvitesCancelled, RemindersCancelled int
	// InvitesInFlight were being sent at that moment: a send that has
	// begun cannot be called back; it ends as it ends.
	InvitesInFlight int
	// ReviewsKept and SuppressionsKept are left in place on purpose.
	ReviewsKept, SuppressionsKept int
	// Cancelled lists the events whose invite or reminder was cancelled,
	// for the caller to signal their workflows.
	Cancelled []string
}

// erasedMark replaces an address found outside the customer's fields.
const erasedMark = "[erased]"

// EraseCustomer erases the customer's data from the account's events (see
// above). Erasing again finds nothing new to do.
func (s *Store) EraseCustomer(ctx context.Context, accountID string, key CustomerKey) (Erasure, error) {
	key.Email, key.Reference = strings.TrimSpace(key.Email), strings.TrimSpace(key.Reference)
	if (key.Email == "") == (key.Reference == "") {
		return Erasure{}, ErrCustomerKey
	}
	var out Erasure
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		out, err = s.eraseCustomer(ctx, tx, accountID, key)
		return err
	})
	if err != nil {
		return Erasure{}, fmt.Errorf("erase customer: %w", err)
	}
	return out, nil
}

// erasedEvent is an event row as the erasure reads it.
type erasedEvent struct {
	ID       string        `db:"id"`
	Status   invite.Status `db:"invite_status"`
	Reminder string        `db:"reminder_status"`
	Email    string        `db:"customer_email"`
	Payload  []byte        `db:"payload"`
}

func (s *Store) eraseCustomer(ctx context.Context, tx *sqlx.Tx, accountID string, key CustomerKey) (Erasure, error) {
	var out Erasure
	var events []erasedEvent
	// Locked in id order, like every multi-row change, so concurrent
	// erasures cannot deadlock; each row lock orders the cancel against
	// the record-before step of a send, as the API's cancel does.
	q := `SELECT id, invite_status, COALESCE(reminder_status, '') AS reminder_status, customer_email, payload
		FROM events WHERE account_id = $1 AND erased_at IS NULL AND `
	arg := key.Reference
	if key.Email != "" {
		q, arg = q+`lower(customer_email) = lower($2)`, key.Email
	} else {
		q += `customer_reference = $2`
	}
	if err := tx.SelectContext(ctx, &events, q+` ORDER BY id FOR UPDATE`, accountID, arg); err != nil {
		return out, fmt.Errorf("find events: %w", err)
	}
	if len(events) == 0 {
		return out, nil
	}

	now := s.Now()
	ids := make([]string, len(events))
	var needles []string // every address of the customer, to find other copies
	for i, e := range events {
		ids[i] = e.ID
		mobile := customerMobile(e.Payload)
		needles = append(needles, e.Email, mobile)
		if d := digitsOf(mobile); len(d) >= 8 {
			needles = append(needles, d)
		}
	}
	needles = usableNeedles(needles)
	scrub := scrubber(needles)

	for _, e := range events {
		switch {
		case e.Status == invite.Pending, e.Status == invite.Scheduled:
			out.InvitesCancelled++
			out.Cancelled = append(out.Cancelled, e.ID)
		case e.Status == invite.Sent && e.Reminder == string(invite.Scheduled):
			out.RemindersCancelled++
			out.Cancelled = append(out.Cancelled, e.ID)
		case e.Status == invite.Sending, e.Reminder == string(invite.Sending):
			out.InvitesInFlight++
		}
		payload, err := erasePayload(e.Payload, scrub)
		if err != nil {
			return out, fmt.Errorf("event %s: %w", e.ID, err)
		}
		if _, err := tx.ExecContext(ctx, `
			UPDATE events SET customer_email = '', customer_mobile = NULL, payload = $2,
				transaction_reference = COALESCE($2::jsonb #>> '{transaction,reference}', transaction_reference),
				last_error = NULL, erased_at = $3, updated_at = $3,
				invite_status = CASE WHEN invite_status IN ('pending', 'scheduled') THEN 'cancelled' ELSE invite_status END,
				invite_reason = CASE WHEN invite_status IN ('pending', 'scheduled') THEN NULL ELSE invite_reason END,
				reminder_status = CASE WHEN invite_status = 'sent' AND reminder_status = 'scheduled' THEN 'cancelled'
				                       ELSE reminder_status END
			WHERE id = $1`, e.ID, payload, now); err != nil {
			return out, fmt.Errorf("erase event %s: %w", e.ID, err)
		}
		// A cancelled invite is reported like the API's cancel (the
		// webhook carries no customer data).
		if e.Status == invite.Pending || e.Status == invite.Scheduled {
			if err := s.emitInviteWebhook(ctx, tx, e.ID, e.Status, invite.Cancelled); err != nil {
				return out, err
			}
		}
	}
	out.Events = len(events)

	if _, err := tx.ExecContext(ctx, `UPDATE send_attempts SET detail = NULL WHERE event_id = ANY($1) AND detail IS NOT NULL`,
		pq.Array(ids)); err != nil {
		return out, fmt.Errorf("erase attempt details: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE account_id = $1 AND event_id = ANY($2)`,
		accountID, pq.Array(ids)); err != nil {
		return out, fmt.Errorf("erase idempotency keys: %w", err)
	}
	var err error
	if out.ReviewsKept, err = scrubReviews(ctx, tx, ids, scrub); err != nil {
		return out, err
	}
	if err := tx.GetContext(ctx, &out.SuppressionsKept, `SELECT count(*) FROM suppressions
		WHERE account_id = $1 AND (address = ANY($2) OR event_id = ANY($3))`,
		accountID, pq.Array(needles), pq.Array(ids)); err != nil {
		return out, fmt.Errorf("count suppressions: %w", err)
	}
	return out, nil
}

// scrubReviews keeps the events' reviews but takes the customer's
// addresses out of their comments; it returns how many there are.
func scrubReviews(ctx context.Context, tx *sqlx.Tx, ids []string, scrub func(string) string) (int, error) {
	var reviews []struct {
		ID      string `db:"id"`
		Comment string `db:"comment"`
	}
	if err := tx.SelectContext(ctx, &reviews, `SELECT id, comment FROM reviews WHERE event_id = ANY($1) ORDER BY id FOR UPDATE`,
		pq.Array(ids)); err != nil {
		return 0, fmt.Errorf("read reviews: %w", err)
	}
	for _, r := range reviews {
		if c := scrub(r.Comment); c != r.Comment {
			if _, err := tx.ExecContext(ctx, `UPDATE reviews SET comment = $2 WHERE id = $1`, r.ID, c); err != nil {
				return 0, fmt.Errorf("scrub review %s: %w", r.ID, err)
			}
		}
	}
	return len(reviews), nil
}

// erasePayload drops the customer's personal fields from a stored event
// and the customer's addresses from every other string in it.
func erasePayload(raw []byte, scrub func(string) string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode payload: %w", err)
	}
	if c, ok := doc["customer"].(map[string]any); ok {
		// The members of the customer that are personal data; the
		// client's reference stays.
		for _, f := range []string{"email", "firstName", "lastName", "address", "mobile"} {
			delete(c, f)
		}
	}
	out, err := json.Marshal(scrubValue(doc, scrub))
	if err != nil {
		return nil, fmt.Errorf("encode payload: %w", err)
	}
	return out, nil
}

// scrubValue applies scrub to every string of a JSON value, keys included.
func scrubValue(v any, scrub func(string) string) any {
	switch v := v.(type) {
	case string:
		return scrub(v)
	case []any:
		for i := range v {
			v[i] = scrubValue(v[i], scrub)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[scrub(k)] = scrubValue(e, scrub)
		}
		return out
	}
	return v
}

// scrubber returns a function that replaces every needle, ignoring case,
// by erasedMark.
func scrubber(needles []string) func(string) string {
	if len(needles) == 0 {
		return func(s string) string { return s }
	}
	quoted := make([]string, len(needles))
	for i, n := range needles {
		quoted[i] = regexp.QuoteMeta(n)
	}
	re := regexp.MustCompile(`(?i)` + strings.Join(quoted, "|"))
	return func(s string) string { return re.ReplaceAllLiteralString(s, erasedMark) }
}

// usableNeedles are the distinct addresses worth searching for: long
// enough that a match is the customer's address, not a coincidence;
// longest first, so a longer one wins over its own substring.
func usableNeedles(in []string) []string {
	var out []string
	for _, n := range in {
		n = strings.ToLower(strings.TrimSpace(n))
		if len(n) >= 6 && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// customerMobile is the mobile number in a stored event, as sent.
func customerMobile(payload []byte) string {
	var p struct {
		Customer struct {
			Mobile string `json:"mobile"`
		} `json:"customer"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return ""
	}
	return p.Customer.Mobile
}

// digitsOf is a number without its spaces, dashes, brackets and plus
// sign: how it appears once normalised ("+49 30 1234567" → "49301234567").
func digitsOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}
