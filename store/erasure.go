package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/invite"
)

// Erasure honours a customer's request to have their data erased in one
// transaction: their pending invites and reminders are cancelled, as the
// API's cancel decides them, and no copy of their email address, names,
// postal address, mobile number or customer reference is left in
// PostgreSQL — not in their events (the customer's fields, the searchable
// columns, error texts, attempt details, idempotency keys chosen by the
// client, metadata and references that repeat an address), nor in any
// column of customerCopies: the comments of their reviews and product
// reviews, the shop's replies, the notes of the reviews' history, and the
// webhook deliveries about their events, delivered or pending. A pending
// delivery is redacted in place, so every later attempt sends the
// redacted body (each attempt reads its body from PostgreSQL); only an
// attempt already under way when the erasure commits goes out as it was
// read, as a mail being sent does.
//
// Kept on purpose: the events themselves (IDs, statuses, products,
// transaction), the reviews (rating and the rest of the comment), and the
// suppression list with the history of its entries. A suppression is the record of the customer's wish
// not to be contacted, or of an address that bounces; dropping it would
// let the next event invite them again.
//
// The customer's values are looked for wherever a copy can be: as whole
// words (Ann in "Thanks, Ann!", not in "Annual"), ignoring case, and only
// in rows that belong to the customer's events — so a value that is also
// an everyday word (a first name such as May) is erased from what the
// customer wrote too, and from nothing of anyone else's.

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

// erasedMark replaces a value of the customer found in a text.
const erasedMark = "[erased]"

// copyColumn is a column outside the events rows where a copy of a
// customer's data can be written: a text the customer wrote, or a message
// made from their event. Its table has an event_id column naming the
// event each row belongs to.
type copyColumn struct {
	table, column string
	// json: the column holds a JSON document; every string in it is
	// scrubbed and its customerReference members are nulled.
	json bool
}

// customerCopies lists every such column. A table added later that can
// hold what a customer wrote or was sent gets its line here; the erasure's
// tests search every text column of every table, so they find a missing
// line.
var customerCopies = []copyColumn{
	{table: "reviews", column: "comment"},
	{table: "reviews", column: "reply_text"}, // a shop may answer "we have written to you at …"
	{table: "product_reviews", column: "comment"},
	{table: "review_history", column: "note"}, // a report's or a decision's note
	{table: "webhook_deliveries", column: "payload", json: true},
}

// EraseCustomer erases the customer's data from the account (see above).
// Erasing again finds nothing new to do.
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
	Mobile   string        `db:"customer_mobile"` // E.164, once an SMS was claimed
	Payload  []byte        `db:"payload"`
}

func (s *Store) eraseCustomer(ctx context.Context, tx *sqlx.Tx, accountID string, key CustomerKey) (Erasure, error) {
	var out Erasure
	var events []erasedEvent
	// Locked in id order, like every multi-row change, so concurrent
	// erasures cannot deadlock; each row lock orders the cancel against
	// the record-before step of a send, as the API's cancel does.
	q := `SELECT id, invite_status, COALESCE(reminder_status, '') AS reminder_status, customer_email,
			COALESCE(customer_mobile, '') AS customer_mobile, payload
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
	var values []string    // everything of the customer's, to find other copies
	var addresses []string // as the suppression list and the send quotas keep them
	var mobileDigits []string
	for i, e := range events {
		ids[i] = e.ID
		values = append(values, e.Email, e.Mobile, digitsOf(e.Mobile))
		values = append(values, customerValues(e.Payload)...)
		addresses = append(addresses, strings.ToLower(e.Email))
		if e.Mobile != "" {
			addresses = append(addresses, e.Mobile)
		}
		// The number as the client sent it, before any SMS made it E.164.
		if d := digitsOf(customerOf(e.Payload).Mobile); d != "" {
			mobileDigits = append(mobileDigits, d)
		}
	}
	scrub := newScrubber(values)

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
			UPDATE events SET customer_email = '', customer_mobile = NULL, customer_reference = NULL, payload = $2,
				transaction_reference = COALESCE($2::jsonb #>> '{transaction,reference}', transaction_reference),
				last_error = NULL, erased_at = $3, updated_at = $3,
				invite_status = CASE WHEN invite_status IN ('pending', 'scheduled') THEN 'cancelled' ELSE invite_status END,
				invite_reason = CASE WHEN invite_status IN ('pending', 'scheduled') THEN NULL ELSE invite_reason END,
				reminder_status = CASE WHEN invite_status = 'sent' AND reminder_status = 'scheduled' THEN 'cancelled'
				                       ELSE reminder_status END
			WHERE id = $1`, e.ID, payload, now); err != nil {
			return out, fmt.Errorf("erase event %s: %w", e.ID, err)
		}
		// A cancelled invite is reported like the API's cancel (after the
		// reference was erased: the webhook carries no customer data).
		if e.Status == invite.Pending || e.Status == invite.Scheduled {
			if err := s.emitInviteWebhook(ctx, tx, e.ID, e.Status, invite.Cancelled); err != nil {
				return out, err
			}
		}
	}
	out.Events = len(events)

	// Attempt details mask addresses (a***@example.com), which no search
	// for the address would find: they go whole.
	if _, err := tx.ExecContext(ctx, `UPDATE send_attempts SET detail = NULL WHERE event_id = ANY($1) AND detail IS NOT NULL`,
		pq.Array(ids)); err != nil {
		return out, fmt.Errorf("erase attempt details: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE account_id = $1 AND event_id = ANY($2)`,
		accountID, pq.Array(ids)); err != nil {
		return out, fmt.Errorf("erase idempotency keys: %w", err)
	}
	// The daily caps count sends by a hash of the address, which would
	// still tell whoever has the address that it was sent to.
	var hashes [][]byte
	for _, e := range events {
		for _, a := range []string{sendAddress(invite.Email, e.Email, ""), sendAddress(invite.SMS, "", e.Mobile)} {
			h := sha256.Sum256([]byte(a))
			hashes = append(hashes, h[:])
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM recipient_daily_sends WHERE account_id = $1 AND address_hash = ANY($2)`,
		accountID, pq.Array(hashes)); err != nil {
		return out, fmt.Errorf("erase send counts: %w", err)
	}
	for _, c := range customerCopies {
		if err := scrubColumn(ctx, tx, c, ids, scrub); err != nil {
			return out, err
		}
	}
	if err := tx.GetContext(ctx, &out.ReviewsKept, `SELECT count(*) FROM reviews WHERE event_id = ANY($1)`, pq.Array(ids)); err != nil {
		return out, fmt.Errorf("count reviews: %w", err)
	}
	// An address's history on the suppression list stays while it is
	// listed (it is the record of that wish); once lifted it goes.
	if _, err := tx.ExecContext(ctx, `DELETE FROM suppression_history h WHERE account_id = $1
		AND (address = ANY($2) OR (address LIKE '+%' AND substr(address, 2) = ANY($3)))
		AND NOT EXISTS (SELECT 1 FROM suppressions s WHERE s.account_id = h.account_id AND s.address = h.address)`,
		accountID, pq.Array(addresses), pq.Array(mobileDigits)); err != nil {
		return out, fmt.Errorf("erase suppression history: %w", err)
	}
	if err := tx.GetContext(ctx, &out.SuppressionsKept, `SELECT count(*) FROM suppressions
		WHERE account_id = $1 AND (address = ANY($2) OR event_id = ANY($3))`,
		accountID, pq.Array(addresses), pq.Array(ids)); err != nil {
		return out, fmt.Errorf("count suppressions: %w", err)
	}
	return out, nil
}

// scrubColumn takes the customer's values out of column c in the rows of
// the events ids. The rows are locked, then rewritten by their physical
// address, which the lock keeps stable until the transaction ends.
func scrubColumn(ctx context.Context, tx *sqlx.Tx, c copyColumn, ids []string, scrub *scrubber) error {
	var rows []struct {
		Row   string `db:"row"`
		Value string `db:"value"`
	}
	q := fmt.Sprintf(`SELECT ctid::text AS row, %[2]s::text AS value FROM %[1]s
		WHERE event_id = ANY($1) AND %[2]s IS NOT NULL ORDER BY ctid FOR UPDATE`, c.table, c.column)
	if err := tx.SelectContext(ctx, &rows, q, pq.Array(ids)); err != nil {
		return fmt.Errorf("read %s.%s: %w", c.table, c.column, err)
	}
	for _, r := range rows {
		v := scrub.text(r.Value)
		if c.json {
			var err error
			if v, err = scrubJSON(r.Value, scrub); err != nil {
				return fmt.Errorf("%s.%s: %w", c.table, c.column, err)
			}
		}
		if v == r.Value {
			continue
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`UPDATE %s SET %s = $2 WHERE ctid = $1::tid`, c.table, c.column), r.Row, v); err != nil {
			return fmt.Errorf("scrub %s.%s: %w", c.table, c.column, err)
		}
	}
	return nil
}

// scrubJSON scrubs every string of a JSON document and nulls its
// customerReference members (a webhook's data). Members may come out in
// another order; the document means the same.
func scrubJSON(raw string, scrub *scrubber) (string, error) {
	decode := func() (any, error) {
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		return doc, nil
	}
	doc, err := decode()
	if err != nil {
		return "", err
	}
	before, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	if doc, err = decode(); err != nil { // scrubValue changes it in place
		return "", err
	}
	after, err := json.Marshal(scrubValue(doc, scrub))
	if err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	if bytes.Equal(before, after) {
		return raw, nil // nothing of the customer's: the bytes stay as they were
	}
	return string(after), nil
}

// erasePayload drops the customer's fields from a stored event and the
// customer's values from every other string in it.
func erasePayload(raw []byte, scrub *scrubber) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode payload: %w", err)
	}
	if c, ok := doc["customer"].(map[string]any); ok {
		for _, f := range customerFields {
			delete(c, f)
		}
	}
	out, err := json.Marshal(scrubValue(doc, scrub))
	if err != nil {
		return nil, fmt.Errorf("encode payload: %w", err)
	}
	return out, nil
}

// customerFields are the members of an event's customer: every one is
// the customer's data.
var customerFields = []string{"email", "firstName", "lastName", "address", "mobile", "reference"}

// scrubValue scrubs every string of a JSON value, keys included, and
// nulls the members named customerReference.
func scrubValue(v any, scrub *scrubber) any {
	switch v := v.(type) {
	case string:
		return scrub.text(v)
	case []any:
		for i := range v {
			v[i] = scrubValue(v[i], scrub)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if k == "customerReference" && e != nil {
				out[k] = nil
				continue
			}
			out[scrub.text(k)] = scrubValue(e, scrub)
		}
		return out
	}
	return v
}

// customerValues are the customer's values in a stored event, as the
// client sent them: the email address, names (each, and the full name),
// the postal address (whole, and each of its lines or comma-separated
// parts), the mobile number (as sent, and its digits alone) and the
// customer reference.
func customerValues(payload []byte) []string {
	c := customerOf(payload)
	out := []string{c.Email, c.FirstName, c.LastName, c.FirstName + " " + c.LastName, c.Address, c.Mobile, digitsOf(c.Mobile), c.Reference}
	out = append(out, strings.FieldsFunc(c.Address, func(r rune) bool { return r == ',' || r == ';' || r == '\n' })...)
	return out
}

// payloadCustomer is the customer of a stored event payload.
type payloadCustomer struct {
	Email     string `json:"email"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Address   string `json:"address"`
	Mobile    string `json:"mobile"`
	Reference string `json:"reference"`
}

// customerOf reads the customer of a payload; nothing from one that is
// not JSON.
func customerOf(payload []byte) payloadCustomer {
	var p struct {
		Customer payloadCustomer `json:"customer"`
	}
	_ = json.Unmarshal(payload, &p)
	return p.Customer
}

// scrubber replaces a customer's values in texts by erasedMark.
type scrubber struct {
	values []*regexp.Regexp // longest value first
}

// minValueRunes is the shortest value looked for: a single letter or
// digit (an initial, a house number) is no one's data on its own.
const minValueRunes = 2

func newScrubber(values []string) *scrubber {
	var kept []string
	for _, v := range values {
		v = strings.ToLower(strings.TrimSpace(v))
		if utf8.RuneCountInString(v) >= minValueRunes && !slices.Contains(kept, v) {
			kept = append(kept, v)
		}
	}
	slices.SortFunc(kept, func(a, b string) int { return len(b) - len(a) })
	s := &scrubber{}
	for _, v := range kept {
		s.values = append(s.values, regexp.MustCompile(`(?i)`+regexp.QuoteMeta(v)))
	}
	return s
}

// text returns t with every whole-word occurrence of a value replaced.
// Longer values go first, so a full name is one mark, not two.
func (s *scrubber) text(t string) string {
	for _, re := range s.values {
		t = replaceWhole(re, t)
	}
	return t
}

// replaceWhole replaces the matches of re in t that stand alone: not
// continued by a letter or digit on a side where the match itself begins
// or ends with one.
func replaceWhole(re *regexp.Regexp, t string) string {
	var b strings.Builder
	done, from := 0, 0
	for from <= len(t) {
		loc := re.FindStringIndex(t[from:])
		if loc == nil {
			break
		}
		start, end := from+loc[0], from+loc[1]
		if standsAlone(t, start, end) {
			b.WriteString(t[done:start])
			b.WriteString(erasedMark)
			done, from = end, end
			continue
		}
		_, size := utf8.DecodeRuneInString(t[start:])
		from = start + max(size, 1)
	}
	if done == 0 {
		return t
	}
	b.WriteString(t[done:])
	return b.String()
}

func standsAlone(t string, start, end int) bool {
	before, _ := utf8.DecodeLastRuneInString(t[:start])
	first, _ := utf8.DecodeRuneInString(t[start:end])
	last, _ := utf8.DecodeLastRuneInString(t[start:end])
	after, _ := utf8.DecodeRuneInString(t[end:])
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) }
	return !(word(before) && word(first)) && !(word(last) && word(after))
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
