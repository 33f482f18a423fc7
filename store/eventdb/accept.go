package eventdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/statsdb"
)

var (
	// ErrUnknownEventType: no event type of that name in the account.
	ErrUnknownEventType = errors.New("unknown event type")
	// ErrUnknownChannel: no channel of that id in the account.
	ErrUnknownChannel = errors.New("unknown channel")
	// ErrIdempotencyMismatch: the Idempotency-Key was used with another body.
	ErrIdempotencyMismatch = errors.New("idempotency key reused with a different request")
	// ErrDuplicateIdempotencyKey: an earlier event of the same AcceptEvents
	// call carries the same idempotency key.
	ErrDuplicateIdempotencyKey = errors.New("idempotency key repeated within the batch")
)

// IdempotencyTTL is how long an Idempotency-Key is remembered.
const IdempotencyTTL = 48 * time.Hour

// MaxAcceptEvents is the most events one AcceptEvents call takes.
const MaxAcceptEvents = 1000

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

// NewEvent is an event to accept: its searchable fields and the whole
// normalised request as Payload.
type NewEvent struct {
	AccountID             string
	Type                  string // the event type's name
	ChannelID             string
	CustomerEmail         string
	CustomerReference     string
	TransactionReference  string
	TransactionDate       time.Time
	EstimatedDeliveryDate *time.Time // a calendar date (UTC midnight)
	Payload               json.RawMessage

	// IdempotencyKey is optional; RequestHash identifies the request body.
	IdempotencyKey string
	RequestHash    []byte
}

// Accepted is the outcome of AcceptEvent.
type Accepted struct {
	EventID string
	// Replayed: an earlier request with the same Idempotency-Key was
	// accepted; nothing new was stored.
	Replayed bool
}

// Outcome is what became of one event of AcceptEvents: accepted (as by
// AcceptEvent, Replayed for a known key with the same body), or one of
// ErrUnknownEventType, ErrUnknownChannel, ErrIdempotencyMismatch,
// ErrDuplicateIdempotencyKey and an *accountdb.QuotaError of QuotaEvents.
type Outcome struct {
	Accepted
	Err error
}

// acceptSQL stores events with the orders to start their workflows, in
// one statement (one round trip, one commit): the input arrives as
// parallel arrays and the payloads as one JSON array; each row's event
// type and invite setting are looked up, and its account's daily event
// quota. Then, for each account and UTC day, the events that may be new
// (their type and setting found, their key not held by a committed
// request) must fit in the room of the account's quota row of shard $14
// (accountdb.EventQuotaCTEs), which the statement locks: the events of an account
// that fit are written with their keys, start orders and funnel changes
// and counted on that row; those of one that does not fit are left
// alone and answered short, for the slow path. Keys must be unique within
// the input (ON CONFLICT cannot touch a row twice). Foreign keys are
// checked at the end of the statement, so a key row may reference the
// event inserted beside it. It answers one row per input row, in input
// order.
var acceptSQL = `
WITH input AS (
    SELECT i.*, p.payload, (i.received_at AT TIME ZONE 'UTC')::date AS day
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[],
            $7::text[], $8::text[], $9::timestamptz[], $10::text[], $11::text[], $12::bytea[])
        WITH ORDINALITY AS i (id, account_id, type, channel_id, customer_email, received_at,
            customer_reference, transaction_reference, transaction_date, delivery, key, hash, n)
    JOIN jsonb_array_elements($13::jsonb) WITH ORDINALITY AS p (payload, n) ON p.n = i.n
), resolved AS (
    SELECT i.*, et.id AS event_type_id, s.id AS setting_id, s.medium, s.delay, s.delay_from, s.send_window
    FROM input i
    LEFT JOIN event_types et ON et.account_id = i.account_id AND et.name = i.type
    LEFT JOIN invite_settings s ON s.event_type_id = et.id AND s.account_id = i.account_id
        AND s.channel_id = i.channel_id
), known AS (
    SELECT r.n FROM resolved r JOIN idempotency_keys k ON k.account_id = r.account_id AND k.key = r.key
    WHERE r.key <> '' AND k.expires_at > r.received_at
), wanted AS (
    SELECT account_id, day, count(*) AS n FROM resolved
    WHERE setting_id IS NOT NULL AND n NOT IN (SELECT n FROM known)
    GROUP BY account_id, day
), ` + accountdb.EventQuotaCTEs("$14", "$16") + `, writable AS (
    SELECT r.* FROM resolved r JOIN fits f ON f.account_id = r.account_id AND f.day = r.day
    WHERE r.setting_id IS NOT NULL
), ik AS (
    INSERT INTO idempotency_keys (account_id, key, request_hash, event_id, created_at, expires_at)
    SELECT account_id, key, hash, id, received_at, received_at + interval '` + idempotencyTTLSQL + `'
    FROM writable WHERE key <> ''
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
    FROM writable
    WHERE key = '' OR id IN (SELECT event_id FROM ik)
    ORDER BY n
    RETURNING id, received_at, account_id, event_type_id, channel_id, locale, invite_medium
), ob AS (
    INSERT INTO outbox (event_id, kind, created_at, next_attempt_at)
    SELECT id, 'start', received_at, received_at - $15::interval FROM ev
), ` + accountdb.CountedEventsCTE("$14") + `, ` + statsdb.AcceptedCTE() + `
SELECT r.n, r.event_type_id IS NOT NULL AS type_found, r.setting_id IS NOT NULL AS setting_found,
       f.account_id IS NOT NULL AND r.setting_id IS NOT NULL AND (r.key = '' OR r.id IN (SELECT event_id FROM ik)) AS inserted,
       f.account_id IS NULL AND r.setting_id IS NOT NULL AND r.n NOT IN (SELECT n FROM known) AS short,
       COALESCE(q.lim, 0) AS lim
FROM resolved r LEFT JOIN fits f ON f.account_id = r.account_id AND f.day = r.day
LEFT JOIN quota q ON q.account_id = r.account_id AND q.day = r.day
ORDER BY r.n`

// idempotencyTTLSQL is IdempotencyTTL as a PostgreSQL interval.
const idempotencyTTLSQL = "48 hours"

// acceptCall is one event to accept and, once done, its outcome.
type acceptCall struct {
	ctx   context.Context
	event NewEvent
	id    string
	now   time.Time

	res Accepted
	err error
	// short: its account's quota row of the statement's shard had no room
	// for it; the slow path (acceptshort.go) decides.
	short bool
	limit int // the account's daily event quota, as the statement read it

	done bool // guarded by acceptQueue.mu
}

// dayOf is the UTC day an event received at t counts on.
func dayOf(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// acceptAll accepts calls (keys unique among them) with the start
// orders due headStart before their arrival, through acceptSQL counting
// on quota shard and, for the calls it leaves short, the quota's slow
// path; it sets every call's outcome. An error is the statement's: no
// call's outcome is set then.
func (s *Store) acceptAll(ctx context.Context, calls []*acceptCall, shard int, headStart string) error {
	if err := s.runAccept(ctx, nil, calls, shard, headStart); err != nil {
		return err
	}
	var short []*acceptCall
	for _, c := range calls {
		if c.short {
			short = append(short, c)
		}
	}
	if len(short) > 0 {
		s.acceptShort(ctx, short, headStart)
	}
	return s.replays(ctx, calls)
}

// runAccept runs acceptSQL for calls on shard, in tx or on the pool, and
// sets each call's outcome but for replays (res.Replayed set, EventID
// empty: replays reads them) and short calls.
func (s *Store) runAccept(ctx context.Context, tx *sqlx.Tx, calls []*acceptCall, shard int, headStart string) error {
	n := len(calls)
	ids, accounts, types, channels, emails := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	received, customerRefs, txRefs, txDates := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	deliveries, keys, hashes := make([]string, n), make([]string, n), make([][]byte, n)
	// The payloads go as one JSON array: cheaper to send and to read than
	// an array literal of JSON texts, each escaped.
	size := 2
	for _, c := range calls {
		size += len(c.event.Payload) + 1
	}
	payloads := make([]byte, 0, size)
	payloads = append(payloads, '[')
	for i, c := range calls {
		e := c.event
		ids[i], accounts[i], types[i], channels[i], emails[i] = c.id, e.AccountID, e.Type, e.ChannelID, e.CustomerEmail
		received[i], customerRefs[i], txRefs[i] = c.now.Format(time.RFC3339Nano), e.CustomerReference, e.TransactionReference
		txDates[i], keys[i], hashes[i] = e.TransactionDate.UTC().Format(time.RFC3339Nano), e.IdempotencyKey, e.RequestHash
		if hashes[i] == nil {
			hashes[i] = []byte{}
		}
		if e.EstimatedDeliveryDate != nil {
			deliveries[i] = e.EstimatedDeliveryDate.Format(time.DateOnly)
		}
		if i > 0 {
			payloads = append(payloads, ',')
		}
		payloads = append(payloads, e.Payload...)
	}
	payloads = append(payloads, ']')
	var rows []struct {
		N            int  `db:"n"`
		TypeFound    bool `db:"type_found"`
		SettingFound bool `db:"setting_found"`
		Inserted     bool `db:"inserted"`
		Short        bool `db:"short"`
		Limit        int  `db:"lim"`
	}
	err := s.acceptStmt.Select(ctx, tx, &rows, pq.Array(ids), pq.Array(accounts), pq.Array(types),
		pq.Array(channels), pq.Array(emails), pq.Array(received), pq.Array(customerRefs), pq.Array(txRefs),
		pq.Array(txDates), pq.Array(deliveries), pq.Array(keys), pq.Array(hashes), string(payloads),
		shard, headStart, s.accounts.Quotas.DailyEvents)
	if err != nil {
		return fmt.Errorf("accept %d events: %w", n, pg.Translate(err))
	}
	if len(rows) != n {
		return fmt.Errorf("accept %d events: %d answers", n, len(rows))
	}
	for _, r := range rows {
		c := calls[r.N-1]
		c.res, c.err, c.short, c.limit = Accepted{}, nil, r.Short, r.Limit
		switch {
		case r.Inserted:
			c.res.EventID = c.id
		case r.Short:
		case r.SettingFound: // a live key: a replay or a mismatch
			c.res.Replayed = true
		case !r.TypeFound:
			c.err = ErrUnknownEventType
		default:
			c.err = ErrUnknownChannel
		}
	}
	return nil
}

// replays answers the calls whose keys were taken and live as the first
// request was answered: the original event for the same body, else a
// mismatch.
func (s *Store) replays(ctx context.Context, calls []*acceptCall) error {
	var accounts, keys []string
	var idx []int
	for i, c := range calls {
		if c.err == nil && c.res.Replayed && c.res.EventID == "" {
			accounts, keys, idx = append(accounts, c.event.AccountID), append(keys, c.event.IdempotencyKey), append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
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
		c := calls[i]
		p, ok := byKey[[2]string{c.event.AccountID, c.event.IdempotencyKey}]
		hash := c.event.RequestHash
		if hash == nil {
			hash = []byte{}
		}
		switch {
		case !ok:
			// Deleted between the two statements (expired and swept):
			// the client may simply send it again.
			c.res, c.err = Accepted{}, fmt.Errorf("idempotency key %q vanished while being read: %w", c.event.IdempotencyKey, pg.ErrUnavailable)
		case !bytes.Equal(prior[p].Hash, hash):
			c.res, c.err = Accepted{}, ErrIdempotencyMismatch
		default:
			c.res = Accepted{EventID: prior[p].EventID, Replayed: true}
		}
	}
	return nil
}

// AcceptEvent durably stores an event together with the order to start
// its workflow. With an Idempotency-Key that was seen before it returns
// the original event (Replayed) or ErrIdempotencyMismatch; a concurrent
// repeat of a new key waits for the first and gets the same answer. Over
// the account's daily event quota it is an *accountdb.QuotaError. Concurrent events
// are committed together (acceptqueue.go).
func (s *Store) AcceptEvent(ctx context.Context, e NewEvent) (Accepted, error) {
	now := s.Now()
	c := &acceptCall{ctx: ctx, event: e, id: pg.NewTimeID("evt", now), now: now}
	s.accepts.accept(s, c)
	return c.res, c.err
}

// AcceptEvents durably stores a batch of events with the orders to start
// their workflows, in one statement but for those the quota's slow path
// takes: either every acceptable event is stored or, on an error, none
// is. It returns one Outcome per event, in order. Keys behave as in
// AcceptEvent and share its key space; an event whose key an earlier
// event of the batch carries is not stored (ErrDuplicateIdempotencyKey).
// Over the account's daily event quota the first events that fit are
// accepted, and each one after them is an *accountdb.QuotaError.
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
	calls := make([]*acceptCall, 0, len(events))
	idx := make([]int, 0, len(events)) // calls[k] is events[idx[k]]
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
		calls = append(calls, &acceptCall{ctx: ctx, event: e, id: pg.NewTimeID("evt", now), now: now})
		idx = append(idx, i)
	}
	if len(calls) == 0 {
		return out, nil
	}
	if err := s.acceptAll(ctx, calls, rand.IntN(accountdb.QuotaShards), "0"); err != nil {
		return nil, err
	}
	for k, c := range calls {
		out[idx[k]] = Outcome{Accepted: c.res, Err: c.err}
	}
	return out, nil
}
