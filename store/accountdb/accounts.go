package accountdb

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Account is a tenant: every resource belongs to exactly one. Its
// branding is what the customer sees of the shop; "" is
// unset, and an unset display name is the account's name.
type Account struct {
	ID          string    `db:"id"`
	Name        string    `db:"name"`
	DisplayName string    `db:"display_name"`
	LogoURL     string    `db:"logo_url"`
	BrandColor  string    `db:"brand_color"`
	ReplyTo     string    `db:"reply_to"`
	CreatedAt   time.Time `db:"created_at"`
}

const accountColumns = `id, name, COALESCE(display_name, '') AS display_name, COALESCE(logo_url, '') AS logo_url,
	COALESCE(brand_color, '') AS brand_color, COALESCE(reply_to, '') AS reply_to, created_at`

// Brand is the account's branding, the display name defaulting to the name.
func (a Account) Brand() brand.Brand {
	b := brand.Brand{DisplayName: a.DisplayName, LogoURL: a.LogoURL, Color: a.BrandColor, ReplyTo: a.ReplyTo}
	if b.DisplayName == "" {
		b.DisplayName = a.Name
	}
	return b
}

// BrandingUpdate changes an account's branding: a nil field is kept, a
// pointer to "" clears it. The caller validates the values.
type BrandingUpdate struct {
	DisplayName, LogoURL, BrandColor, ReplyTo *string
}

// UpdateBranding applies u to the account and returns it.
func (s *Store) UpdateBranding(ctx context.Context, id string, u BrandingUpdate) (Account, error) {
	var a Account
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		// CASE keeps a column when its argument is NULL; NULLIF('') clears it.
		if err := tx.GetContext(ctx, &a, `UPDATE accounts SET
			display_name = CASE WHEN $2::text IS NULL THEN display_name ELSE NULLIF($2, '') END,
			logo_url     = CASE WHEN $3::text IS NULL THEN logo_url ELSE NULLIF($3, '') END,
			brand_color  = CASE WHEN $4::text IS NULL THEN brand_color ELSE NULLIF($4, '') END,
			reply_to     = CASE WHEN $5::text IS NULL THEN reply_to ELSE NULLIF($5, '') END
			WHERE id = $1 RETURNING `+accountColumns, id, u.DisplayName, u.LogoURL, u.BrandColor, u.ReplyTo); err != nil {
			return err
		}
		return persondb.RecordChange(ctx, tx, s.Now(), id, persondb.AuditBrandingChanged, id, nil)
	})
	return a, pg.Translate(err)
}

// CreateAccount creates an account with its default native channel
// "Default" in one transaction.
func (s *Store) CreateAccount(ctx context.Context, name string) (Account, Channel, error) {
	now := s.Now()
	a := Account{ID: pg.NewID("acc"), Name: name, CreatedAt: now}
	ch := Channel{ID: pg.NewID("chl"), AccountID: a.ID, Name: "Default", Type: "native", CreatedAt: now, UpdatedAt: now}
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)`, a.ID, a.Name, a.CreatedAt); err != nil {
			return fmt.Errorf("insert account: %w", err)
		}
		_, err := tx.NamedExecContext(ctx, `INSERT INTO channels (id, account_id, name, type, created_at, updated_at)
			VALUES (:id, :account_id, :name, :type, :created_at, :updated_at)`, ch)
		if err != nil {
			return fmt.Errorf("insert default channel: %w", err)
		}
		return nil
	})
	return a, ch, err
}

// Account returns one account.
func (s *Store) Account(ctx context.Context, id string) (Account, error) {
	var a Account
	err := s.Read(ctx).GetContext(ctx, &a, `SELECT `+accountColumns+` FROM accounts WHERE id = $1`, id)
	return a, pg.Translate(err)
}

// AccountByName returns the oldest account with this name (names are not
// unique; `touchpoint dev` uses this to find its seeded account).
func (s *Store) AccountByName(ctx context.Context, name string) (Account, error) {
	var a Account
	err := s.db.GetContext(ctx, &a, `SELECT `+accountColumns+` FROM accounts WHERE name = $1 ORDER BY created_at, id LIMIT 1`, name)
	return a, pg.Translate(err)
}

// LockTx takes a row lock on the account that serialises the
// creation of event types and channels, so that every (channel, event
// type) pair gets its invite setting even when both are created at once.
// FOR NO KEY UPDATE does not block inserts that merely reference the
// account.
//
// Whatever counts an account's resources or sends under a limit takes it
// first (creating a webhook endpoint, a test send).
func LockTx(ctx context.Context, tx *sqlx.Tx, accountID string) error {
	var id string
	if err := tx.GetContext(ctx, &id, `SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, accountID); err != nil {
		return fmt.Errorf("lock account: %w", err)
	}
	return nil
}

// DefaultChannel returns the account's oldest native channel, the one
// created with the account.
func (s *Store) DefaultChannel(ctx context.Context, accountID string) (Channel, error) {
	var ch Channel
	err := s.db.GetContext(ctx, &ch, `SELECT id, account_id, name, type, created_at, updated_at FROM channels
		WHERE account_id = $1 AND type = 'native' ORDER BY created_at, id LIMIT 1`, accountID)
	return ch, pg.Translate(err)
}
