package eventdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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
)

// IdempotencyTTL is how long an Idempotency-Key is remembered.
const IdempotencyTTL = 48 * time.Hour

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

// acceptSQL stores the event, its outbox row and its idempotency key in
// one statement (one round trip, atomic): the event type and the invite
// setting of (type, channel) are looked up in CTEs, and nothing is
// written when either is missing. Foreign keys are checked at the end of
// the statement, so the key row may reference the event inserted beside it.
var acceptSQL = `
WITH et AS (
    SELECT id FROM event_types WHERE account_id = $2 AND name = $3
), ist AS (
    SELECT s.id, s.medium, s.delay, s.delay_from, s.send_window
    FROM invite_settings s JOIN et ON s.event_type_id = et.id
    WHERE s.account_id = $2 AND s.channel_id = $4
), ik AS (
    INSERT INTO idempotency_keys (account_id, key, request_hash, event_id, created_at, expires_at)
    SELECT $2, $11, $12, $1, $6, $13 FROM ist WHERE $11 <> ''
    ON CONFLICT (account_id, key) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, event_id = EXCLUDED.event_id,
            created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
    RETURNING 1
), ev AS (
    INSERT INTO events (id, account_id, event_type_id, channel_id, received_at, type,
        customer_email, customer_reference, transaction_reference, transaction_date,
        estimated_delivery_date, payload, invite_setting_id, delay, delay_from, send_window,
        invite_medium, locale, updated_at)
    SELECT $1, $2, et.id, $4, $6, $3, $5, NULLIF($7, ''), $8, $9, $10, $14,
        ist.id, ist.delay, ist.delay_from, ist.send_window, ist.medium, touchpoint_language($14::jsonb ->> 'defaultLocale'), $6
    FROM et, ist
    WHERE $11 = '' OR EXISTS (SELECT 1 FROM ik)
    RETURNING id, received_at, account_id, event_type_id, channel_id, locale, invite_medium
), ob AS (
    INSERT INTO outbox (event_id, kind, created_at, next_attempt_at)
    SELECT id, 'start', $6, $6 - interval '` + singleHeadStart + `' FROM ev
), ` + statsdb.AcceptedCTE() + `
SELECT EXISTS (SELECT 1 FROM et) AS type_found,
       EXISTS (SELECT 1 FROM ist) AS setting_found,
       EXISTS (SELECT 1 FROM ev) AS inserted`

// AcceptEvent durably stores an event together with the order to start
// its workflow. With an Idempotency-Key that was seen before it returns
// the original event (Replayed) or ErrIdempotencyMismatch; a concurrent
// repeat of a new key waits for the first and gets the same answer.
// Concurrent events without a key are committed together (acceptbatch.go).
func (s *Store) AcceptEvent(ctx context.Context, e NewEvent) (Accepted, error) {
	id, now := pg.NewID("evt"), s.Now()
	if e.IdempotencyKey == "" {
		return s.accepts.accept(s, &acceptCall{ctx: ctx, event: e, id: id, now: now})
	}
	return s.acceptOne(ctx, e, id, now)
}

// acceptOne runs acceptSQL: one event, with or without an Idempotency-Key.
func (s *Store) acceptOne(ctx context.Context, e NewEvent, id string, now time.Time) (Accepted, error) {
	var delivery any
	if e.EstimatedDeliveryDate != nil {
		delivery = e.EstimatedDeliveryDate.Format(time.DateOnly)
	}
	hash := e.RequestHash
	if hash == nil {
		hash = []byte{}
	}
	var r struct {
		TypeFound    bool `db:"type_found"`
		SettingFound bool `db:"setting_found"`
		Inserted     bool `db:"inserted"`
	}
	err := s.acceptStmt.Get(ctx, nil, &r, id, e.AccountID, e.Type, e.ChannelID, e.CustomerEmail,
		now, e.CustomerReference, e.TransactionReference, e.TransactionDate.UTC(), delivery,
		e.IdempotencyKey, hash, now.Add(IdempotencyTTL), []byte(e.Payload))
	if err != nil {
		return Accepted{}, fmt.Errorf("accept event: %w", pg.Translate(err))
	}
	if r.SettingFound && !r.Inserted {
		return s.replay(ctx, e, hash)
	}
	return acceptOutcome(id, r.TypeFound, r.SettingFound)
}

// acceptOutcome is the answer to an accept statement that found the
// event type and invite setting or not; when it found both, it stored
// the event.
func acceptOutcome(id string, typeFound, settingFound bool) (Accepted, error) {
	switch {
	case !typeFound:
		return Accepted{}, ErrUnknownEventType
	case !settingFound:
		return Accepted{}, ErrUnknownChannel
	}
	return Accepted{EventID: id}, nil
}

// replay answers a repeat of an Idempotency-Key that is taken and still
// live as the first request was answered.
func (s *Store) replay(ctx context.Context, e NewEvent, hash []byte) (Accepted, error) {
	var prior struct {
		Hash    []byte `db:"request_hash"`
		EventID string `db:"event_id"`
	}
	err := s.db.GetContext(ctx, &prior, `SELECT request_hash, event_id FROM idempotency_keys WHERE account_id = $1 AND key = $2`,
		e.AccountID, e.IdempotencyKey)
	if err != nil {
		return Accepted{}, fmt.Errorf("read idempotency key: %w", pg.Translate(err))
	}
	if !bytes.Equal(prior.Hash, hash) {
		return Accepted{}, ErrIdempotencyMismatch
	}
	return Accepted{EventID: prior.EventID, Replayed: true}, nil
}
