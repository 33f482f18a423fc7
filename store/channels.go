package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Channel segments an account's business; events name one.
type Channel struct {
	ID        string    `db:"id"`
	AccountID string    `db:"account_id"`
	Name      string    `db:"name"`
	Type      string    `db:"type"` // "native" or an integration's slug
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

// ChannelTypeNative is the service's own channel type, the default.
const ChannelTypeNative = "native"

const channelColumns = `id, account_id, name, type, created_at, updated_at`

// CreateChannel creates a channel and one invite setting for each of the
// account's event types, in one transaction. typ "" means native. A
// duplicate name is ErrConflict; an unknown account ErrNotFound; one
// channel more than the account's quota a *QuotaError (ErrQuotaExceeded).
func (s *Store) CreateChannel(ctx context.Context, accountID, name, typ string) (Channel, error) {
	if typ == "" {
		typ = ChannelTypeNative
	}
	now := s.Now()
	ch := Channel{ID: NewID("chl"), AccountID: accountID, Name: name, Type: typ, CreatedAt: now, UpdatedAt: now}
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		// Serialises with CreateEventType so no (channel, event type) pair
		// is missed by two transactions that cannot see each other.
		if err := lockAccount(ctx, tx, accountID); err != nil {
			return err
		}
		if err := s.checkResourceQuota(ctx, tx, accountID, QuotaChannels); err != nil {
			return err
		}
		if _, err := tx.NamedExecContext(ctx, `INSERT INTO channels (`+channelColumns+`)
			VALUES (:id, :account_id, :name, :type, :created_at, :updated_at)`, ch); err != nil {
			return fmt.Errorf("insert channel: %w", err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO invite_settings
			(id, account_id, channel_id, event_type_id, delay, created_at, updated_at)
			SELECT 'ist-' || gen_random_uuid(), $1, $2, et.id, $3, $4, $4
			FROM event_types et WHERE et.account_id = $1
			ON CONFLICT (channel_id, event_type_id) DO NOTHING`,
			accountID, ch.ID, s.defaultDelay(), now)
		if err != nil {
			return fmt.Errorf("insert invite settings of channel: %w", err)
		}
		return nil
	})
	if err != nil {
		return Channel{}, err
	}
	return ch, nil
}

// Channel returns one of the account's channels.
func (s *Store) Channel(ctx context.Context, accountID, id string) (Channel, error) {
	var ch Channel
	err := s.db.GetContext(ctx, &ch, `SELECT `+channelColumns+` FROM channels WHERE account_id = $1 AND id = $2`, accountID, id)
	return ch, translate(err)
}

// ListChannels returns a page of the account's channels, newest first,
// and the cursor of the next page (nil on the last).
func (s *Store) ListChannels(ctx context.Context, accountID string, p Page) ([]Channel, *Cursor, error) {
	var chs []Channel
	query, args := newWhere(accountID).page(`SELECT `+channelColumns+` FROM channels`, p)
	if err := s.read(ctx).SelectContext(ctx, &chs, query, args...); err != nil {
		return nil, nil, translate(err)
	}
	chs, next := trim(chs, pageLimit(p), func(c Channel) Cursor { return Cursor{CreatedAt: c.CreatedAt, ID: c.ID} })
	return chs, next, nil
}
