package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
)

// Erasure honours a customer's request to have their data erased in one
// transaction: their pending invites and reminders are cancelled, as the
// API's cancel decides them, and no copy of their email address, names,
// postal address, mobile number, customer reference or order reference is
// left in PostgreSQL. Where a copy can be is not decided here: the
// registry of personal data beside the migrations (schema.Tables) lists
// every column that can hold text or bytes, with its class and, for a
// personal column, what an erasure does to it; the erasure goes through
// it table by table, and a test holds the registry to the database's
// catalogue, so a column added later is erased (or declared harmless)
// from the day it exists.
//
// A pending webhook delivery is redacted in place, so every later attempt
// sends the redacted body (each attempt reads its body from PostgreSQL);
// only an attempt already under way when the erasure commits goes out as
// it was read, as a mail being sent does.
//
// Kept on purpose: the events themselves (IDs, statuses, products but for
// the customer's values in them, transaction date), the reviews (rating
// and the rest of the comment), and the suppression list with the history
// of its entries (the registry's Keep and KeepWhileSuppressed).
//
// The customer's values are looked for wherever a copy can be: as whole
// words (Ann in "Thanks, Ann!", not in "Annual"), ignoring case, also as a
// URL spells them (greta%40example.com), and only in rows that belong to
// the customer's events — so a value that is also an everyday word (a
// first name such as May) is erased from what the customer wrote too, and
// from nothing of anyone else's.

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
	Reason   invite.Reason `db:"invite_reason"`
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
	q := `SELECT id, invite_status, COALESCE(invite_reason, '') AS invite_reason, COALESCE(reminder_status, '') AS reminder_status,
			customer_email, COALESCE(customer_mobile, '') AS customer_mobile, payload
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
	c := customerOfEvents(accountID, events)

	var cancelled []erasedEvent
	for _, e := range events {
		switch {
		case e.Status == invite.Pending, e.Status == invite.Scheduled:
			out.InvitesCancelled++
			out.Cancelled = append(out.Cancelled, e.ID)
			cancelled = append(cancelled, e)
		case e.Status == invite.Sent && e.Reminder == string(invite.Scheduled):
			out.RemindersCancelled++
			out.Cancelled = append(out.Cancelled, e.ID)
		case e.Status == invite.Sending, e.Reminder == string(invite.Sending):
			out.InvitesInFlight++
		}
	}
	now := s.Now()
	if _, err := tx.ExecContext(ctx, `
		UPDATE events SET erased_at = $2, updated_at = $2,
			invite_status = CASE WHEN invite_status IN ('pending', 'scheduled') THEN 'cancelled' ELSE invite_status END,
			invite_reason = CASE WHEN invite_status IN ('pending', 'scheduled') THEN NULL ELSE invite_reason END,
			reminder_status = CASE WHEN invite_status = 'sent' AND reminder_status = 'scheduled' THEN 'cancelled'
			                       ELSE reminder_status END
		WHERE id = ANY($1)`, pq.Array(c.events), now); err != nil {
		return out, fmt.Errorf("mark events erased: %w", err)
	}
	out.Events = len(events)

	for _, t := range schema.Tables() {
		if err := eraseTable(ctx, tx, t, c); err != nil {
			return out, err
		}
	}

	// A cancelled invite is reported like the API's cancel (after the
	// reference was erased: the webhook carries no customer data), and
	// counted as cancelled.
	for _, e := range cancelled {
		if err := s.emitErasureCancel(ctx, tx, e.ID, e.Status); err != nil {
			return out, err
		}
	}
	if err := tx.GetContext(ctx, &out.ReviewsKept, `SELECT count(*) FROM reviews WHERE event_id = ANY($1)`, pq.Array(c.events)); err != nil {
		return out, fmt.Errorf("count reviews: %w", err)
	}
	if err := tx.GetContext(ctx, &out.SuppressionsKept, `SELECT count(*) FROM suppressions
		WHERE account_id = $1 AND (address = ANY($2) OR event_id = ANY($3))`,
		accountID, pq.Array(c.addresses), pq.Array(c.events)); err != nil {
		return out, fmt.Errorf("count suppressions: %w", err)
	}
	for _, e := range cancelled {
		if err := s.Stats.CountChangeTx(ctx, tx, e.ID, func(before, _ *stats.Facts) {
			before.Invite.Status, before.Invite.Reason = e.Status, e.Reason
		}); err != nil {
			return out, err
		}
	}
	return out, nil
}

// erasedCustomer is what finds a customer's rows and values.
type erasedCustomer struct {
	accountID string
	events    []string
	// addresses are the customer's addresses as the suppression list
	// spells them (and as their events did).
	addresses []string
	// hashes are the SHA-256 of their addresses as the send counters
	// spell them.
	hashes [][]byte
	scrub  *scrubber
}

func customerOfEvents(accountID string, events []erasedEvent) *erasedCustomer {
	c := &erasedCustomer{accountID: accountID}
	var values []string // everything of the customer's, to find other copies
	for _, e := range events {
		c.events = append(c.events, e.ID)
		values = append(values, e.Email, e.Mobile, digitsOf(e.Mobile))
		values = append(values, customerValues(e.Payload)...)
		c.addresses = append(c.addresses, suppressiondb.ListedAddress(invite.Email, e.Email), strings.TrimSpace(e.Email))
		if e.Mobile != "" {
			c.addresses = append(c.addresses, e.Mobile)
		}
		// The number as the client sent it, before any SMS made it E.164.
		if d := digitsOf(customerOf(e.Payload).Mobile); d != "" {
			c.addresses = append(c.addresses, "+"+d)
		}
		for _, a := range []string{accountdb.SendAddress(invite.Email, e.Email, ""), accountdb.SendAddress(invite.SMS, "", e.Mobile)} {
			h := sha256.Sum256([]byte(a))
			c.hashes = append(c.hashes, h[:])
		}
	}
	c.scrub = newScrubber(values)
	return c
}

// eraseTable erases the customer's data from table t as the registry
// says of each of its columns, in the customer's rows.
func eraseTable(ctx context.Context, tx *sqlx.Tx, t schema.Table, c *erasedCustomer) error {
	cols := t.Customer()
	if len(cols) == 0 {
		return nil
	}
	table := pq.QuoteIdentifier(t.Name)
	var where string
	var args []any
	switch {
	case t.Rows.Event != "":
		where, args = pq.QuoteIdentifier(t.Rows.Event)+` = ANY($1)`, []any{pq.Array(c.events)}
	case t.Rows.Address != "":
		where, args = `account_id = $1 AND `+pq.QuoteIdentifier(t.Rows.Address)+` = ANY($2)`, []any{c.accountID, pq.Array(c.addresses)}
	case t.Rows.AddressHash != "":
		where, args = `account_id = $1 AND `+pq.QuoteIdentifier(t.Rows.AddressHash)+` = ANY($2)`, []any{c.accountID, pq.Array(c.hashes)}
	default:
		return fmt.Errorf("erase %s: the registry does not say whose its rows are", t.Name)
	}
	exec := func(what, q string) error {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("erase %s (%s): %w", t.Name, what, err)
		}
		return nil
	}
	for _, col := range cols {
		if col.Erase == schema.DeleteRow { // the rows are the customer's data
			return exec("delete", `DELETE FROM `+table+` WHERE `+where)
		}
	}
	var set, changed []string
	var rewrite []schema.Column
	for _, col := range cols {
		name := pq.QuoteIdentifier(col.Name)
		switch {
		case col.Class == schema.FreeText, col.Erase == schema.Redact:
			rewrite = append(rewrite, col)
		case col.Erase == schema.SetNull:
			set, changed = append(set, name+` = NULL`), append(changed, name+` IS NOT NULL`)
		case col.Erase == schema.SetEmpty:
			set, changed = append(set, name+` = ''`), append(changed, name+` <> ''`)
		case col.Erase == schema.Keep:
		case col.Erase == schema.KeepWhileSuppressed:
			if err := exec("no longer suppressed", `DELETE FROM `+table+` t WHERE `+where+` AND NOT EXISTS (
				SELECT 1 FROM suppressions s WHERE s.account_id = t.account_id AND s.address = t.`+name+`)`); err != nil {
				return err
			}
		default:
			return fmt.Errorf("erase %s.%s: no erasure is %q", t.Name, col.Name, col.Erase)
		}
	}
	if len(set) > 0 {
		if err := exec("clear", `UPDATE `+table+` SET `+strings.Join(set, ", ")+` WHERE `+where+
			` AND (`+strings.Join(changed, " OR ")+`)`); err != nil {
			return err
		}
	}
	if len(rewrite) > 0 {
		return redactRows(ctx, tx, t.Name, rewrite, where, args, c.scrub)
	}
	return nil
}

// redactRows takes the customer's values out of cols of the rows of
// table that where selects. The rows are locked, then rewritten by their
// physical address (the partition and the tuple), which the lock keeps
// stable until the transaction ends.
func redactRows(ctx context.Context, tx *sqlx.Tx, table string, cols []schema.Column, where string, args []any, scrub *scrubber) error {
	read := make([]string, len(cols))
	for i, col := range cols {
		read[i] = pq.QuoteIdentifier(col.Name) + `::text`
	}
	rows, err := tx.QueryContext(ctx, `SELECT tableoid::text, ctid::text, `+strings.Join(read, ", ")+
		` FROM `+pq.QuoteIdentifier(table)+` WHERE `+where+` ORDER BY tableoid, ctid FOR UPDATE`, args...)
	if err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	type change struct {
		part, tid string
		set       []string
		values    []any
	}
	var changes []change
	for rows.Next() {
		var part, tid string
		values := make([]sql.NullString, len(cols))
		dest := []any{&part, &tid}
		for i := range values {
			dest = append(dest, &values[i])
		}
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return fmt.Errorf("read %s: %w", table, err)
		}
		ch := change{part: part, tid: tid, values: []any{part, tid}}
		for i, col := range cols {
			if !values[i].Valid {
				continue
			}
			v := values[i].String
			after := scrub.text(v)
			if col.Erase == schema.Redact {
				if after, err = redactJSON(v, scrub); err != nil {
					rows.Close()
					return fmt.Errorf("%s.%s: %w", table, col.Name, err)
				}
			}
			if after != v {
				ch.values = append(ch.values, after)
				ch.set = append(ch.set, fmt.Sprintf(`%s = $%d`, pq.QuoteIdentifier(col.Name), len(ch.values)))
			}
		}
		if len(ch.set) > 0 {
			changes = append(changes, ch)
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", table, err)
	}
	for _, ch := range changes {
		if _, err := tx.ExecContext(ctx, `UPDATE `+pq.QuoteIdentifier(table)+` SET `+strings.Join(ch.set, ", ")+
			` WHERE tableoid = $1::oid AND ctid = $2::tid`, ch.values...); err != nil {
			return fmt.Errorf("redact %s: %w", table, err)
		}
	}
	return nil
}

// redactJSON redacts a JSON document: the members of its customer object
// go (an event as sent), its customerReference members become null (a
// webhook's data), and every other string is scrubbed. Members may come
// out in another order; the document means the same. A document with
// nothing of the customer's is returned as it was, byte for byte (a
// webhook's signature covers the bytes sent).
func redactJSON(raw string, scrub *scrubber) (string, error) {
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
	if doc, err = decode(); err != nil { // redacting changes it in place
		return "", err
	}
	if m, ok := doc.(map[string]any); ok {
		if c, ok := m["customer"].(map[string]any); ok {
			for _, f := range customerFields {
				delete(c, f)
			}
		}
	}
	after, err := json.Marshal(scrubValue(doc, scrub))
	if err != nil {
		return "", fmt.Errorf("encode: %w", err)
	}
	if bytes.Equal(before, after) {
		return raw, nil
	}
	return string(after), nil
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
// parts), the mobile number (as sent, and its digits alone), the customer
// reference and the order's reference (which the shop's own records tie
// to the customer).
func customerValues(payload []byte) []string {
	var p struct {
		Customer    payloadCustomer `json:"customer"`
		Transaction struct {
			Reference string `json:"reference"`
		} `json:"transaction"`
	}
	_ = json.Unmarshal(payload, &p) // nothing from one that is not JSON
	c := p.Customer
	out := []string{c.Email, c.FirstName, c.LastName, c.FirstName + " " + c.LastName, c.Address, c.Mobile, digitsOf(c.Mobile),
		c.Reference, p.Transaction.Reference}
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
		v = strings.TrimSpace(v)
		if utf8.RuneCountInString(v) < minValueRunes {
			continue
		}
		// As a URL carries it too (?for=greta%40example.com, /for/Zo%C3%AB),
		// in its case and in lower case: an escaped letter has no case.
		for _, c := range []string{v, strings.ToLower(v)} {
			for _, spelled := range []string{c, url.QueryEscape(c), url.PathEscape(c)} {
				if spelled = strings.ToLower(spelled); !slices.Contains(kept, spelled) {
					kept = append(kept, spelled)
				}
			}
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

// emitErasureCancel reports the invite of eventID moving from status from to
// cancelled by an erasure, after the transaction has written it.
func (s *Store) emitErasureCancel(ctx context.Context, tx *sqlx.Tx, eventID string, from invite.Status) error {
	return s.Webhooks.EmitSendTx(ctx, tx, eventID, invite.Change{Kind: invite.KindInvite,
		Event: invite.EventOf(invite.KindInvite, from, invite.Cancelled)})
}
