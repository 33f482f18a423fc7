package accountdb

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
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
// ErrConflict; an unknown account pg.ErrNotFound; one event type more than
// the account's quota a *QuotaError (ErrQuotaExceeded).
func (s *Store) CreateEventType(ctx context.Context, accountID, name string, active bool) (EventType, error) {
	now := s.Now()
	et := EventType{ID: pg.NewID("ety"), AccountID: accountID, Name: name, Active: active, CreatedAt: now, UpdatedAt: now}
	err := s.addResource(ctx, accountID, QuotaEventTypes, et.ID, now, func(tx *sqlx.Tx) error {
		if _, err := tx.NamedExecContext(ctx, `INSERT INTO event_types (`+eventTypeColumns+`)
			VALUES (:id, :account_id, :name, :active, :created_at, :updated_at)`, et); err != nil {
			return err
		}
		return persondb.RecordChange(ctx, tx, now, accountID, persondb.AuditEventTypeCreated, et.ID, nil)
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
	return et, pg.Translate(err)
}

// EventTypeByName returns the account's event type with exactly this name.
func (s *Store) EventTypeByName(ctx context.Context, accountID, name string) (EventType, error) {
	var et EventType
	err := s.db.GetContext(ctx, &et, `SELECT `+eventTypeColumns+` FROM event_types WHERE account_id = $1 AND name = $2`, accountID, name)
	return et, pg.Translate(err)
}

// ListEventTypes returns a page of the account's event types, newest
// first, and the cursor of the next page (nil on the last).
func (s *Store) ListEventTypes(ctx context.Context, accountID string, f EventTypeFilter, p pg.Page) ([]EventType, *pg.Cursor, error) {
	w := pg.NewWhere(accountID)
	if f.Name != nil {
		w.Add("name = ", *f.Name)
	}
	if f.Active != nil {
		w.Add("active = ", *f.Active)
	}
	var ets []EventType
	next, err := pg.SelectPage(ctx, s.Read(ctx), &ets, w, `SELECT `+eventTypeColumns+` FROM event_types`, p,
		func(e EventType) pg.Cursor { return pg.Cursor{CreatedAt: e.CreatedAt, ID: e.ID} })
	if err != nil {
		return nil, nil, err
	}
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
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		now := s.Now()
		if err := tx.GetContext(ctx, &et, `UPDATE event_types
			SET name = COALESCE($3, name), active = COALESCE($4, active), updated_at = $5
			WHERE account_id = $1 AND id = $2
			RETURNING `+eventTypeColumns, accountID, id, u.Name, u.Active, now); err != nil {
			return err
		}
		return persondb.RecordChange(ctx, tx, now, accountID, persondb.AuditEventTypeChanged, id,
			map[string]string{"active": strconv.FormatBool(et.Active)})
	})
	return et, pg.Translate(err)
}

// addResource creates a channel or an event type (kind QuotaChannels or
// QuotaEventTypes, with the id id, created at now) by insert, and the
// invite setting of every (channel, event type) pair it makes, with the
// default delay and the same creation time, in one transaction. The account lock serialises the creations of an
// account, so that no pair is missed by two transactions that cannot see
// each other, and none overshoots the quota.
func (s *Store) addResource(ctx context.Context, accountID, kind, id string, now time.Time, insert func(tx *sqlx.Tx) error) error {
	what := resourceTables[kind]
	newSide := map[string]string{QuotaChannels: "c.id", QuotaEventTypes: "et.id"}[kind]
	return pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if err := LockTx(ctx, tx, accountID); err != nil {
			return err
		}
		if err := s.CheckResourceQuotaTx(ctx, tx, accountID, kind); err != nil {
			return err
		}
		if err := insert(tx); err != nil {
			return fmt.Errorf("insert into %s: %w", what, err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO invite_settings
			(id, account_id, channel_id, event_type_id, delay, created_at, updated_at)
			SELECT 'ist-' || gen_random_uuid(), $1, c.id, et.id, $3, $4, $4
			FROM channels c JOIN event_types et ON et.account_id = c.account_id
			WHERE c.account_id = $1 AND `+newSide+` = $2
			ON CONFLICT (channel_id, event_type_id) DO NOTHING`,
			accountID, id, s.defaultDelay(), now)
		if err != nil {
			return fmt.Errorf("insert invite settings of the new row of %s: %w", what, err)
		}
		return nil
	})
}

// defaultDelay is the delay of automatically created invite settings.
func (s *Store) defaultDelay() string {
	if s.DefaultInviteDelay == "" {
		return "P7D"
	}
	return s.DefaultInviteDelay
}
