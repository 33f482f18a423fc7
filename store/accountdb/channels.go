package accountdb

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/pg"
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
// duplicate name is ErrConflict; an unknown account pg.ErrNotFound; one
// channel more than the account's quota a *QuotaError (ErrQuotaExceeded).
func (s *Store) CreateChannel(ctx context.Context, accountID, name, typ string) (Channel, error) {
	if typ == "" {
		typ = ChannelTypeNative
	}
	now := s.Now()
	ch := Channel{ID: pg.NewID("chl"), AccountID: accountID, Name: name, Type: typ, CreatedAt: now, UpdatedAt: now}
	err := s.addResource(ctx, accountID, QuotaChannels, ch.ID, now, func(tx *sqlx.Tx) error {
		_, err := tx.NamedExecContext(ctx, `INSERT INTO channels (`+channelColumns+`)
			VALUES (:id, :account_id, :name, :type, :created_at, :updated_at)`, ch)
		return err
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
	return ch, pg.Translate(err)
}

// ListChannels returns a page of the account's channels, newest first,
// and the cursor of the next page (nil on the last).
func (s *Store) ListChannels(ctx context.Context, accountID string, p pg.Page) ([]Channel, *pg.Cursor, error) {
	var chs []Channel
	next, err := pg.SelectPage(ctx, s.Read(ctx), &chs, pg.NewWhere(accountID), `SELECT `+channelColumns+` FROM channels`, p,
		func(c Channel) pg.Cursor { return pg.Cursor{CreatedAt: c.CreatedAt, ID: c.ID} })
	if err != nil {
		return nil, nil, err
	}
	return chs, next, nil
}
