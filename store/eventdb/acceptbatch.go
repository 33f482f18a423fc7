package eventdb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/statsdb"
)

// Group commit of accepts. A single accept is one statement and one
// commit; under load most of its cost is the round trip, the planning of
// that statement and the commit, not the rows it writes. So concurrent
// accepts without an Idempotency-Key queue up, and whoever finds a free
// flush slot writes everything queued in one statement (one commit). No
// request waits for a timer: a lone request is flushed at once, and a
// batch grows only from the requests that arrived while the previous
// batches were being written. Every request still gets its 202 only
// after its own rows have committed.
const (
	// Statements in flight at once. Measured at concurrency 32 (see
	// docs/performance.md): 1 or 2 beat 4 and 8, where batches stay small
	// and PostgreSQL again pays per commit; 2 lets one batch fill while
	// the other commits.
	acceptFlushers = 2
	acceptBatchMax = 64 // events per statement
	// acceptBatchTimeout bounds one batch statement, which no single
	// request's cancellation may abort.
	acceptBatchTimeout = 15 * time.Second
)

// acceptQueue is the group commit's queue; its zero value is ready.
type acceptQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	waiting  []*acceptCall
	flushing int
}

// acceptCall is one queued accept and, once done, its outcome.
type acceptCall struct {
	ctx   context.Context
	event NewEvent
	id    string
	now   time.Time

	done bool // guarded by acceptQueue.mu
	res  Accepted
	err  error
}

// accept queues c and returns its outcome. The caller flushes batches
// itself (its own and others') while a flush slot is free, and waits for
// another flusher otherwise.
func (q *acceptQueue) accept(s *Store, c *acceptCall) (Accepted, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cond == nil {
		q.cond = sync.NewCond(&q.mu)
	}
	q.waiting = append(q.waiting, c)
	for !c.done {
		if q.flushing >= acceptFlushers || len(q.waiting) == 0 {
			q.cond.Wait()
			continue
		}
		n := min(len(q.waiting), acceptBatchMax)
		batch := make([]*acceptCall, n)
		copy(batch, q.waiting)
		q.waiting = append(q.waiting[:0], q.waiting[n:]...)
		q.flushing++
		q.mu.Unlock()
		s.acceptBatch(batch)
		q.mu.Lock()
		q.flushing--
		for _, b := range batch {
			b.done = true
		}
		q.cond.Broadcast()
	}
	return c.res, c.err
}

// acceptBatchSQL is acceptSQL for many keyless events at once: the input
// arrives as parallel arrays, each row's event type and invite setting
// are looked up, and the rows that have both are written with their
// start orders. It answers one row per input row, in input order.
var acceptBatchSQL = `
WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[],
            $7::text[], $8::text[], $9::timestamptz[], $10::text[], $11::jsonb[])
        WITH ORDINALITY AS i (id, account_id, type, channel_id, customer_email, received_at,
            customer_reference, transaction_reference, transaction_date, delivery, payload, n)
), resolved AS (
    SELECT i.*, et.id AS event_type_id, s.id AS setting_id, s.medium, s.delay, s.delay_from, s.send_window
    FROM input i
    LEFT JOIN event_types et ON et.account_id = i.account_id AND et.name = i.type
    LEFT JOIN invite_settings s ON s.event_type_id = et.id AND s.account_id = i.account_id
        AND s.channel_id = i.channel_id
), ev AS (
    INSERT INTO events (id, account_id, event_type_id, channel_id, received_at, type,
        customer_email, customer_reference, transaction_reference, transaction_date,
        estimated_delivery_date, payload, invite_setting_id, delay, delay_from, send_window,
        invite_medium, locale, updated_at)
    SELECT id, account_id, event_type_id, channel_id, received_at, type,
        customer_email, NULLIF(customer_reference, ''), transaction_reference, transaction_date,
        NULLIF(delivery, '')::date, payload, setting_id, delay, delay_from, send_window,
        medium, touchpoint_language(payload ->> 'defaultLocale'), received_at
    FROM resolved WHERE setting_id IS NOT NULL ORDER BY n
    RETURNING id, received_at, account_id, event_type_id, channel_id, locale, invite_medium
), ob AS (
    INSERT INTO outbox (event_id, kind, created_at, next_attempt_at)
    SELECT id, 'start', received_at, received_at - interval '` + singleHeadStart + `' FROM ev
), ` + statsdb.AcceptedCTE() + `
SELECT n, event_type_id IS NOT NULL AS type_found, setting_id IS NOT NULL AS setting_found
FROM resolved ORDER BY n`

// acceptBatch writes the live calls of batch in one statement and sets
// each one's outcome.
func (s *Store) acceptBatch(batch []*acceptCall) {
	live := batch[:0:0]
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = err // its client is gone; nothing was written
			continue
		}
		live = append(live, c)
	}
	switch len(live) {
	case 0:
		return
	case 1:
		c := live[0]
		c.res, c.err = s.acceptOne(c.ctx, c.event, c.id, c.now)
		return
	}
	err := s.acceptMany(live)
	if err == nil {
		return
	}
	// PostgreSQL refused the statement, so it rolled back: one request
	// must not fail the others, so each is tried alone. Any other error
	// (the connection) is every request's answer, since a retry could
	// meet a commit whose answer was lost.
	var pqErr *pq.Error
	refused := errors.As(err, &pqErr)
	for _, c := range live {
		if refused {
			c.res, c.err = s.acceptOne(c.ctx, c.event, c.id, c.now)
		} else {
			c.err = err
		}
	}
}

// acceptMany runs acceptBatchSQL for calls.
func (s *Store) acceptMany(calls []*acceptCall) error {
	n := len(calls)
	var (
		ids, accounts, types, channels, emails = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		received, customerRefs, txRefs         = make([]string, n), make([]string, n), make([]string, n)
		txDates, deliveries, payloads          = make([]string, n), make([]string, n), make([]string, n)
	)
	for i, c := range calls {
		e := c.event
		ids[i], accounts[i], types[i], channels[i], emails[i] = c.id, e.AccountID, e.Type, e.ChannelID, e.CustomerEmail
		received[i], customerRefs[i], txRefs[i] = c.now.Format(time.RFC3339Nano), e.CustomerReference, e.TransactionReference
		txDates[i], payloads[i] = e.TransactionDate.UTC().Format(time.RFC3339Nano), string(e.Payload)
		if e.EstimatedDeliveryDate != nil {
			deliveries[i] = e.EstimatedDeliveryDate.Format(time.DateOnly)
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(calls[0].ctx), acceptBatchTimeout)
	defer cancel()
	var rows []struct {
		N            int  `db:"n"`
		TypeFound    bool `db:"type_found"`
		SettingFound bool `db:"setting_found"`
	}
	err := s.acceptBatchStmt.Select(ctx, nil, &rows, pq.Array(ids), pq.Array(accounts), pq.Array(types),
		pq.Array(channels), pq.Array(emails), pq.Array(received), pq.Array(customerRefs), pq.Array(txRefs),
		pq.Array(txDates), pq.Array(deliveries), pq.Array(payloads))
	if err != nil {
		return fmt.Errorf("accept %d events: %w", n, pg.Translate(err))
	}
	for _, c := range calls {
		c.err = errors.New("accept: the batch statement gave no answer for this event") // cannot happen
	}
	for _, r := range rows {
		c := calls[r.N-1]
		c.res, c.err = acceptOutcome(c.id, r.TypeFound, r.SettingFound)
	}
	return nil
}
