package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// EventType is a touchpoint: its Name is the `type` events name it by
// (matched exactly, case-sensitive).
type EventType struct {
	ID        string    `db:"id"`
	AccountID string    `db:"account_id"`
	Name      string    `db:"name"`
	Active    bool      `db:"active"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

const eventTypeColumns = `id, account_id, name, active, created_at, updated_at`

// EventTypeFilter narrows ListEventTypes; nil fields do not filter.
type EventTypeFilter struct {
	Name   *string // exact match
	Active *bool
}

// EventTypeUpdate is a partial update; nil fields keep their value.
type EventTypeUpdate struct {
	Name   *string
	Active *bool
}

// CreateEventType creates an event type and one invite setting for each
// of the account's channels, in one transaction. A duplicate name is
// ErrConflict; an unknown account ErrNotFound; one event type more than
// the account's quota a *QuotaError (ErrQuotaExceeded).
func (s *Store) CreateEventType(ctx context.Context, accountID, name string, active bool) (EventType, error) {
	now := s.Now()
	et := EventType{ID: NewID("ety"), AccountID: accountID, Name: name, Active: active, CreatedAt: now, UpdatedAt: now}
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		// Serialises with CreateChannel so no (channel, event type) pair is
		// missed by two transactions that cannot see each other.
		if err := lockAccount(ctx, tx, accountID); err != nil {
			return err
		}
		if err := s.checkResourceQuota(ctx, tx, accountID, QuotaEventTypes); err != nil {
			return err
		}
		if _, err := tx.NamedExecContext(ctx, `INSERT INTO event_types (`+eventTypeColumns+`)
			VALUES (:id, :account_id, :name, :active, :created_at, :updated_at)`, et); err != nil {
			return fmt.Errorf("insert event type: %w", err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO invite_settings
			(id, account_id, channel_id, event_type_id, delay, created_at, updated_at)
			SELECT 'ist-' || gen_random_uuid(), $1, c.id, $2, $3, $4, $4
			FROM channels c WHERE c.account_id = $1
			ON CONFLICT (channel_id, event_type_id) DO NOTHING`,
			accountID, et.ID, s.defaultDelay(), now)
		if err != nil {
			return fmt.Errorf("insert invite settings of event type: %w", err)
		}
		return nil
	})
	if err != nil {
		return EventType{}, err
	}
	return et, nil
}

// EventType returns one of the account's event types.
func (s *Store) EventType(ctx context.Context, accountID, id string) (EventType, error) {
	var et EventType
	err := s.db.GetContext(ctx, &et, `SELECT `+eventTypeColumns+` FROM event_types WHERE account_id = $1 AND id = $2`, accountID, id)
	return et, translate(err)
}

// EventTypeByName returns the account's event type with exactly this name.
func (s *Store) EventTypeByName(ctx context.Context, accountID, name string) (EventType, error) {
	var et EventType
	err := s.db.GetContext(ctx, &et, `SELECT `+eventTypeColumns+` FROM event_types WHERE account_id = $1 AND name = $2`, accountID, name)
	return et, translate(err)
}

// ListEventTypes returns a page of the account's event types, newest
// first, and the cursor of the next page (nil on the last).
func (s *Store) ListEventTypes(ctx context.Context, accountID string, f EventTypeFilter, p Page) ([]EventType, *Cursor, error) {
	w := newWhere(accountID)
	if f.Name != nil {
		w.add("name = ", *f.Name)
	}
	if f.Active != nil {
		w.add("active = ", *f.Active)
	}
	var ets []EventType
	query, args := w.page(`SELECT `+eventTypeColumns+` FROM event_types`, p)
	if err := s.read(ctx).SelectContext(ctx, &ets, query, args...); err != nil {
		return nil, nil, translate(err)
	}
	ets, next := trim(ets, pageLimit(p), func(e EventType) Cursor { return Cursor{CreatedAt: e.CreatedAt, ID: e.ID} })
	return ets, next, nil
}

// UpdateEventType changes the given fields and updated_at. A name taken
// by another event type of the account is ErrConflict. An empty update
// changes nothing and returns the event type as it is.
func (s *Store) UpdateEventType(ctx context.Context, accountID, id string, u EventTypeUpdate) (EventType, error) {
	if u.Name == nil && u.Active == nil {
		return s.EventType(ctx, accountID, id)
	}
	var et EventType
	err := s.db.GetContext(ctx, &et, `UPDATE event_types
		SET name = COALESCE($3, name), active = COALESCE($4, active), updated_at = $5
		WHERE account_id = $1 AND id = $2
		RETURNING `+eventTypeColumns, accountID, id, u.Name, u.Active, s.Now())
	return et, translate(err)
}

// defaultDelay is the delay of automatically created invite settings.
func (s *Store) defaultDelay() string {
	if s.DefaultInviteDelay == "" {
		return "P7D"
	}
	return s.DefaultInviteDelay
}
