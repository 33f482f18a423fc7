package eventdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/statsdb"
)

// ErrDuplicateIdempotencyKey: an earlier event of the same AcceptEvents
// call carries the same idempotency key.
var ErrDuplicateIdempotencyKey = errors.New("idempotency key repeated within the batch")

// singleHeadStart is how much earlier than its arrival the start order of
// an event accepted alone (POST /events) is due; a batch's orders are due
// at their arrival.
//
// This is how single events and a large backfill share the starter. The
// starter claims the due orders with the earliest due time first (an
// index scan, FOR UPDATE SKIP LOCKED, in batches with bounded
// concurrency toward Temporal), so a single event overtakes every batch
// event that arrived less than this before it: while 100,000 batch events
// wait, a single POST is in the starter's next claim. The backfill still
// drains at full speed whenever no single events are due, and a flood of
// single events can hold batch orders back by this much at most, after
// which they are older than anything new. One hour outlasts the drain of a
// million-event backlog at a few hundred starts per second. It needs no
// column of its own: the pending-orders index already orders by due time.
const singleHeadStart = "1 hour"

// MaxAcceptEvents is the most events one AcceptEvents call takes.
const MaxAcceptEvents = 1000

// Outcome is what became of one event of AcceptEvents: accepted (as by
// AcceptEvent, Replayed for a known key with the same body), or one of
// ErrUnknownEventType, ErrUnknownChannel, ErrIdempotencyMismatch and
// ErrDuplicateIdempotencyKey.
type Outcome struct {
	Accepted
	Err error
}

// acceptManySQL is acceptSQL for a whole batch of one client, keys
// included: the input arrives as parallel arrays; each row's event type
// and invite setting are looked up; the keys of the rows that have both
// are claimed (a live key of another request is left alone); and the
// rows that have both and a fresh key or none are written with their
// start orders. It answers one row per input row, in input order. Keys
// must be unique within the input (ON CONFLICT cannot touch a row twice).
// Foreign keys are checked at the end of the statement, so a key row may
// reference the event inserted beside it.
var acceptManySQL = `
WITH input AS (
    SELECT i.*, $6::timestamptz AS received_at, p.payload
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
            $7::text[], $8::text[], $9::timestamptz[], $10::text[], $12::text[], $13::bytea[])
        WITH ORDINALITY AS i (id, account_id, type, channel_id, customer_email,
            customer_reference, transaction_reference, transaction_date, delivery, key, hash, n)
    JOIN jsonb_array_elements($11::jsonb) WITH ORDINALITY AS p (payload, n) ON p.n = i.n
), resolved AS (
    SELECT i.*, et.id AS event_type_id, s.id AS setting_id, s.medium, s.delay, s.delay_from, s.send_window
    FROM input i
    LEFT JOIN event_types et ON et.account_id = i.account_id AND et.name = i.type
    LEFT JOIN invite_settings s ON s.event_type_id = et.id AND s.account_id = i.account_id
        AND s.channel_id = i.channel_id
), ik AS (
    INSERT INTO idempotency_keys (account_id, key, request_hash, event_id, created_at, expires_at)
    SELECT account_id, key, hash, id, received_at, $14::timestamptz
    FROM resolved WHERE setting_id IS NOT NULL AND key <> ''
    ON CONFLICT (account_id, key) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, event_id = EXCLUDED.event_id,
            created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
    RETURNING event_id
), ev AS (
    INSERT INTO events (id, account_id, event_type_id, channel_id, received_at, type,
        customer_email, customer_reference, transaction_reference, transaction_date,
        estimated_delivery_date, payload, invite_setting_id, delay, delay_from, send_window,
        invite_medium, locale, updated_at)
    SELECT id, account_id, event_type_id, channel_id, received_at, type,
        customer_email, NULLIF(customer_reference, ''), transaction_reference, transaction_date,
        NULLIF(delivery, '')::date, payload, setting_id, delay, delay_from, send_window,
        medium, touchpoint_language(payload ->> 'defaultLocale'), received_at
    FROM resolved
    WHERE setting_id IS NOT NULL AND (key = '' OR id IN (SELECT event_id FROM ik))
    ORDER BY n
    RETURNING id, received_at, account_id, event_type_id, channel_id, locale, invite_medium
), ob AS (
    INSERT INTO outbox (event_id, kind, created_at, next_attempt_at)
    SELECT id, 'start', received_at, received_at FROM ev
), ` + statsdb.AcceptedCTE() + `
SELECT n, event_type_id IS NOT NULL AS type_found, setting_id IS NOT NULL AS setting_found,
       setting_id IS NOT NULL AND (key = '' OR id IN (SELECT event_id FROM ik)) AS inserted
FROM resolved ORDER BY n`

// AcceptEvents durably stores a batch of events with the orders to start
// their workflows, all in one statement: either every acceptable event is
// stored or, on an error, none is. It returns one Outcome per event, in
// order. Keys behave as in AcceptEvent and share its key space; an event
// whose key an earlier event of the batch carries is not stored
// (ErrDuplicateIdempotencyKey).
//
// Start orders of a batch are due at their arrival, while those of single
// accepts get a head start (singleHeadStart): the starter takes the
// oldest due order first, so a single event is not queued behind a large
// backfill.
func (s *Store) AcceptEvents(ctx context.Context, events []NewEvent) ([]Outcome, error) {
	if len(events) > MaxAcceptEvents {
		return nil, fmt.Errorf("accept events: %d events, at most %d in one call", len(events), MaxAcceptEvents)
	}
	out := make([]Outcome, len(events))
	now := s.Now()
	n := len(events)
	idx := make([]int, 0, n) // events[idx[k]] is input row k+1
	ids, accounts, types, channels, emails := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n),
		make([]string, 0, n), make([]string, 0, n)
	customerRefs, txRefs, txDates, deliveries, keys := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n),
		make([]string, 0, n), make([]string, 0, n)
	hashes := make([][]byte, 0, n)
	// The payloads go as one JSON array: cheaper to send and to read than
	// an array literal of JSON texts, each escaped.
	size := 2
	for _, e := range events {
		size += len(e.Payload) + 1
	}
	payloads := make([]byte, 0, size)
	payloads = append(payloads, '[')
	seen := map[[2]string]bool{}
	for i, e := range events {
		if e.IdempotencyKey != "" {
			k := [2]string{e.AccountID, e.IdempotencyKey}
			if seen[k] {
				out[i].Err = ErrDuplicateIdempotencyKey
				continue
			}
			seen[k] = true
		}
		id := pg.NewID("evt")
		out[i].EventID = id
		idx = append(idx, i)
		ids, accounts, types, channels, emails = append(ids, id), append(accounts, e.AccountID), append(types, e.Type),
			append(channels, e.ChannelID), append(emails, e.CustomerEmail)
		customerRefs, txRefs = append(customerRefs, e.CustomerReference), append(txRefs, e.TransactionReference)
		delivery := ""
		if e.EstimatedDeliveryDate != nil {
			delivery = e.EstimatedDeliveryDate.Format(time.DateOnly)
		}
		hash := e.RequestHash
		if hash == nil {
			hash = []byte{}
		}
		txDates, deliveries, keys = append(txDates, e.TransactionDate.UTC().Format(time.RFC3339Nano)),
			append(deliveries, delivery), append(keys, e.IdempotencyKey)
		hashes = append(hashes, hash)
		if len(payloads) > 1 {
			payloads = append(payloads, ',')
		}
		payloads = append(payloads, e.Payload...)
	}
	payloads = append(payloads, ']')
	if len(idx) == 0 {
		return out, nil
	}
	var rows []struct {
		N            int  `db:"n"`
		TypeFound    bool `db:"type_found"`
		SettingFound bool `db:"setting_found"`
		Inserted     bool `db:"inserted"`
	}
	err := s.acceptManyStmt.Select(ctx, nil, &rows, pq.Array(ids), pq.Array(accounts), pq.Array(types),
		pq.Array(channels), pq.Array(emails), now, pq.Array(customerRefs), pq.Array(txRefs),
		pq.Array(txDates), pq.Array(deliveries), string(payloads), pq.Array(keys), pq.Array(hashes),
		now.Add(IdempotencyTTL))
	if err != nil {
		return nil, fmt.Errorf("accept %d events: %w", len(idx), pg.Translate(err))
	}
	if len(rows) != len(idx) {
		return nil, fmt.Errorf("accept %d events: %d answers", len(idx), len(rows))
	}
	var replays []int // events whose key was taken already
	for _, r := range rows {
		i := idx[r.N-1]
		o := &out[i]
		switch {
		case r.Inserted:
		case r.SettingFound: // a live key: a replay or a mismatch
			o.EventID = ""
			replays = append(replays, i)
		default:
			o.EventID = ""
			_, o.Err = acceptOutcome("", r.TypeFound, r.SettingFound)
		}
	}
	if len(replays) > 0 {
		if err := s.replayMany(ctx, events, replays, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// replayMany answers the events at idx, whose keys were taken and live,
// as replay does: the original event for the same body, else a mismatch.
func (s *Store) replayMany(ctx context.Context, events []NewEvent, idx []int, out []Outcome) error {
	accounts, keys := make([]string, len(idx)), make([]string, len(idx))
	for k, i := range idx {
		accounts[k], keys[k] = events[i].AccountID, events[i].IdempotencyKey
	}
	var prior []struct {
		AccountID string `db:"account_id"`
		Key       string `db:"key"`
		Hash      []byte `db:"request_hash"`
		EventID   string `db:"event_id"`
	}
	err := s.db.SelectContext(ctx, &prior, `
		SELECT k.account_id, k.key, k.request_hash, k.event_id
		FROM idempotency_keys k JOIN unnest($1::text[], $2::text[]) AS i (account_id, key)
			ON k.account_id = i.account_id AND k.key = i.key`, pq.Array(accounts), pq.Array(keys))
	if err != nil {
		return fmt.Errorf("read idempotency keys: %w", pg.Translate(err))
	}
	byKey := make(map[[2]string]int, len(prior))
	for p, r := range prior {
		byKey[[2]string{r.AccountID, r.Key}] = p
	}
	for _, i := range idx {
		e := events[i]
		p, ok := byKey[[2]string{e.AccountID, e.IdempotencyKey}]
		hash := e.RequestHash
		if hash == nil {
			hash = []byte{}
		}
		switch {
		case !ok:
			// Deleted between the two statements (expired and swept):
			// the client may simply send it again.
			out[i].Err = fmt.Errorf("idempotency key %q vanished while being read: %w", e.IdempotencyKey, pg.ErrUnavailable)
		case !bytes.Equal(prior[p].Hash, hash):
			out[i].Err = ErrIdempotencyMismatch
		default:
			out[i].Accepted = Accepted{EventID: prior[p].EventID, Replayed: true}
		}
	}
	return nil
}
