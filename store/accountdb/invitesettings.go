package accountdb

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sendtime"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// InviteSetting governs the invites of one (channel, event type) pair.
type InviteSetting struct {
	ID                    string
	AccountID             string
	ChannelID             string
	EventTypeID           string
	Active                bool
	Medium                invite.Medium
	Delay                 string               // ISO 8601 duration, as sent
	DelayFrom             string               // sendtime.FromEvent, FromTransaction or FromDelivery
	SendWindow            *sendtime.SendWindow // nil: any time
	MinDaysBetweenInvites int
	// ReminderDelay is the wait from the invite's sending to its reminder
	// (ISO 8601, as sent); "" means no reminder.
	ReminderDelay string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// InviteSettingFilter narrows ListInviteSettings; "" does not filter.
type InviteSettingFilter struct {
	ChannelID   string
	EventTypeID string
}

// inviteSettingRow is the table's shape; send_window is jsonb.
type inviteSettingRow struct {
	ID                    string        `db:"id"`
	AccountID             string        `db:"account_id"`
	ChannelID             string        `db:"channel_id"`
	EventTypeID           string        `db:"event_type_id"`
	Active                bool          `db:"active"`
	Medium                invite.Medium `db:"medium"`
	Delay                 string        `db:"delay"`
	DelayFrom             string        `db:"delay_from"`
	SendWindow            []byte        `db:"send_window"`
	MinDaysBetweenInvites int           `db:"min_days_between_invites"`
	ReminderDelay         string        `db:"reminder_delay"`
	CreatedAt             time.Time     `db:"created_at"`
	UpdatedAt             time.Time     `db:"updated_at"`
}

const inviteSettingColumns = `id, account_id, channel_id, event_type_id, active, medium, delay, delay_from,
	send_window, min_days_between_invites, COALESCE(reminder_delay, '') AS reminder_delay, created_at, updated_at`

func (r inviteSettingRow) setting() (InviteSetting, error) {
	is := InviteSetting{ID: r.ID, AccountID: r.AccountID, ChannelID: r.ChannelID, EventTypeID: r.EventTypeID,
		Active: r.Active, Medium: r.Medium, Delay: r.Delay, DelayFrom: r.DelayFrom,
		MinDaysBetweenInvites: r.MinDaysBetweenInvites, ReminderDelay: r.ReminderDelay, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.SendWindow != nil {
		is.SendWindow = new(sendtime.SendWindow)
		if err := json.Unmarshal(r.SendWindow, is.SendWindow); err != nil {
			return InviteSetting{}, fmt.Errorf("invite setting %s: decode send_window: %w", r.ID, err)
		}
	}
	return is, nil
}

// InviteSetting returns one of the account's invite settings.
func (s *Store) InviteSetting(ctx context.Context, accountID, id string) (InviteSetting, error) {
	var r inviteSettingRow
	err := s.db.GetContext(ctx, &r, `SELECT `+inviteSettingColumns+` FROM invite_settings WHERE account_id = $1 AND id = $2`, accountID, id)
	if err != nil {
		return InviteSetting{}, pg.Translate(err)
	}
	return r.setting()
}

// ListInviteSettings returns a page of the account's invite settings,
// newest first, and the cursor of the next page (nil on the last).
func (s *Store) ListInviteSettings(ctx context.Context, accountID string, f InviteSettingFilter, p pg.Page) ([]InviteSetting, *pg.Cursor, error) {
	w := pg.NewWhere(accountID)
	if f.ChannelID != "" {
		w.Add("channel_id = ", f.ChannelID)
	}
	if f.EventTypeID != "" {
		w.Add("event_type_id = ", f.EventTypeID)
	}
	var rows []inviteSettingRow
	next, err := pg.SelectPage(ctx, s.Read(ctx), &rows, w, `SELECT `+inviteSettingColumns+` FROM invite_settings`, p,
		func(r inviteSettingRow) pg.Cursor { return pg.Cursor{CreatedAt: r.CreatedAt, ID: r.ID} })
	if err != nil {
		return nil, nil, err
	}
	out := make([]InviteSetting, len(rows))
	for i, r := range rows {
		if out[i], err = r.setting(); err != nil {
			return nil, nil, err
		}
	}
	return out, next, nil
}

// UpdateInviteSetting reads the setting under a row lock, lets apply
// change it, and writes every mutable field back with a new updated_at,
// so concurrent partial updates never lose each other's changes. apply
// validates; its error is returned as is and nothing is written. When
// apply changes nothing, nothing is written either.
func (s *Store) UpdateInviteSetting(ctx context.Context, accountID, id string, apply func(*InviteSetting) error) (InviteSetting, error) {
	var out InviteSetting
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var r inviteSettingRow
		if err := tx.GetContext(ctx, &r, `SELECT `+inviteSettingColumns+` FROM invite_settings
			WHERE account_id = $1 AND id = $2 FOR NO KEY UPDATE`, accountID, id); err != nil {
			return err
		}
		cur, err := r.setting()
		if err != nil {
			return err
		}
		next := cur
		if cur.SendWindow != nil { // apply must not alias the current window
			w := *cur.SendWindow
			next.SendWindow = &w
		}
		if err := apply(&next); err != nil {
			return err
		}
		// Identity and creation time are not the caller's to change.
		next.ID, next.AccountID, next.ChannelID, next.EventTypeID = cur.ID, cur.AccountID, cur.ChannelID, cur.EventTypeID
		next.CreatedAt, next.UpdatedAt = cur.CreatedAt, cur.UpdatedAt
		if sameMutable(cur, next) {
			out = cur
			return nil
		}
		var window *string // nil: SQL NULL
		if next.SendWindow != nil {
			b, err := json.Marshal(next.SendWindow)
			if err != nil {
				return err
			}
			window = new(string(b))
		}
		next.UpdatedAt = s.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE invite_settings
			SET active = $3, medium = $4, delay = $5, delay_from = $6, send_window = $7,
			    min_days_between_invites = $8, reminder_delay = NULLIF($9, ''), updated_at = $10
			WHERE account_id = $1 AND id = $2`,
			accountID, id, next.Active, next.Medium, next.Delay, next.DelayFrom, window,
			next.MinDaysBetweenInvites, next.ReminderDelay, next.UpdatedAt); err != nil {
			return fmt.Errorf("update invite setting: %w", err)
		}
		out = next
		return persondb.RecordChange(ctx, tx, next.UpdatedAt, accountID, persondb.AuditInviteSettingChanged, id, nil)
	})
	return out, err
}

// InviteSettingFor returns the setting of a (channel, event type) pair.
func (s *Store) InviteSettingFor(ctx context.Context, accountID, channelID, eventTypeID string) (InviteSetting, error) {
	var r inviteSettingRow
	err := s.db.GetContext(ctx, &r, `SELECT `+inviteSettingColumns+` FROM invite_settings
		WHERE account_id = $1 AND channel_id = $2 AND event_type_id = $3`, accountID, channelID, eventTypeID)
	if err != nil {
		return InviteSetting{}, pg.Translate(err)
	}
	return r.setting()
}

func sameMutable(a, b InviteSetting) bool {
	sameWindow := (a.SendWindow == nil) == (b.SendWindow == nil) && (a.SendWindow == nil || *a.SendWindow == *b.SendWindow)
	return sameWindow && a.Active == b.Active && a.Medium == b.Medium && a.Delay == b.Delay &&
		a.DelayFrom == b.DelayFrom && a.MinDaysBetweenInvites == b.MinDaysBetweenInvites && a.ReminderDelay == b.ReminderDelay
}
