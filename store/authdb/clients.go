package authdb

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Client is an API client: a built-in one (Issuer "", ClientID = ID, with a
// secret hash) or an external issuer's client linked to an account.
type Client struct {
	ID          string    `db:"id"`
	AccountID   string    `db:"account_id"`
	Name        string    `db:"name"`
	AccessGroup string    `db:"access_group"` // auth.GroupFull, GroupEvents or GroupReadonly
	Issuer      string    `db:"issuer"`
	ClientID    string    `db:"client_id"`
	SecretHash  []byte    `db:"secret_hash"`
	NotBefore   time.Time `db:"not_before"`
	CreatedAt   time.Time `db:"created_at"`
}

const clientColumns = `id, account_id, name, access_group, issuer, client_id, secret_hash, not_before, created_at`

// CreateClient stores a built-in client whose secret hash the caller made.
func (s *Store) CreateClient(ctx context.Context, accountID, name, group string, secretHash []byte) (Client, error) {
	id := pg.NewID("cli")
	c := Client{ID: id, AccountID: accountID, Name: name, AccessGroup: group, ClientID: id,
		SecretHash: secretHash, NotBefore: time.Unix(0, 0).UTC(), CreatedAt: s.Now()}
	return c, s.insertClient(ctx, c)
}

// LinkClient admits an external issuer's client to an account.
func (s *Store) LinkClient(ctx context.Context, accountID, issuer, clientID, name, group string) (Client, error) {
	c := Client{ID: pg.NewID("cli"), AccountID: accountID, Name: name, AccessGroup: group, Issuer: issuer,
		ClientID: clientID, NotBefore: time.Unix(0, 0).UTC(), CreatedAt: s.Now()}
	return c, s.insertClient(ctx, c)
}

func (s *Store) insertClient(ctx context.Context, c Client) error {
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if _, err := tx.NamedExecContext(ctx, `INSERT INTO api_clients (`+clientColumns+`)
			VALUES (:id, :account_id, :name, :access_group, :issuer, :client_id, :secret_hash, :not_before, :created_at)`, c); err != nil {
			return err
		}
		return persondb.RecordChange(ctx, tx, c.CreatedAt, c.AccountID, persondb.AuditClientCreated, c.ID,
			map[string]string{"accessGroup": c.AccessGroup})
	})
	if err != nil {
		return fmt.Errorf("insert client: %w", pg.Translate(err))
	}
	return nil
}

// ClientByID returns a built-in client by its client_id.
func (s *Store) ClientByID(ctx context.Context, clientID string) (Client, error) {
	return s.ClientByIssuer(ctx, "", clientID)
}

// ClientByIssuer returns the client an (issuer, client id) pair maps to;
// issuer "" means the built-in issuer.
func (s *Store) ClientByIssuer(ctx context.Context, issuer, clientID string) (Client, error) {
	var c Client
	err := s.db.GetContext(ctx, &c, `SELECT `+clientColumns+` FROM api_clients WHERE issuer = $1 AND client_id = $2`, issuer, clientID)
	return c, pg.Translate(err)
}

// ListClients returns an account's clients, newest first.
func (s *Store) ListClients(ctx context.Context, accountID string) ([]Client, error) {
	var cs []Client
	err := s.db.SelectContext(ctx, &cs, `SELECT `+clientColumns+` FROM api_clients WHERE account_id = $1 ORDER BY created_at DESC, id DESC`, accountID)
	return cs, pg.Translate(err)
}

// DeleteClient removes a client; its tokens stop working at once.
func (s *Store) DeleteClient(ctx context.Context, id string) error {
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var accountID string
		if err := tx.GetContext(ctx, &accountID, `DELETE FROM api_clients WHERE id = $1 RETURNING account_id`, id); err != nil {
			return err
		}
		return persondb.RecordChange(ctx, tx, s.Now(), accountID, persondb.AuditClientDeleted, id, nil)
	})
	return pg.Translate(err)
}

// RevokeTokens sets the client's not-before to now: every token issued
// before it is rejected. It returns the new not-before.
func (s *Store) RevokeTokens(ctx context.Context, id string) (time.Time, error) {
	// Round up to the next whole second: tokens carry iat in seconds, so a
	// token issued in the same second as the revocation is revoked too.
	nb := s.Now().Truncate(time.Second).Add(time.Second)
	res, err := s.db.ExecContext(ctx, `UPDATE api_clients SET not_before = $2 WHERE id = $1`, id, nb)
	if err != nil {
		return time.Time{}, pg.Translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return time.Time{}, pg.ErrNotFound
	}
	return nb, nil
}

// SetClientSecret replaces a built-in client's secret hash (`touchpoint
// dev` rotates its dev client's secret at every start).
func (s *Store) SetClientSecret(ctx context.Context, id string, secretHash []byte) error {
	res, err := s.db.ExecContext(ctx, `UPDATE api_clients SET secret_hash = $2 WHERE id = $1 AND issuer = ''`, id, secretHash)
	if err != nil {
		return pg.Translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return pg.ErrNotFound
	}
	return nil
}

// Client returns a client by its cli-… id.
func (s *Store) Client(ctx context.Context, id string) (Client, error) {
	var c Client
	err := s.db.GetContext(ctx, &c, `SELECT `+clientColumns+` FROM api_clients WHERE id = $1`, id)
	return c, pg.Translate(err)
}
