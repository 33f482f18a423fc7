package authdb

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/pg"
)

// SigningKey is one of the built-in issuer's signing keys. PrivateKey is
// sealed by the issuer; the store never sees it in the clear.
type SigningKey struct {
	KID        string    `db:"kid"`
	Algorithm  string    `db:"algorithm"`
	PrivateKey []byte    `db:"private_key"`
	PublicJWK  string    `db:"public_jwk"` // the JSON Web Key (JSON), public part only
	CreatedAt  time.Time `db:"created_at"`
	// ActiveFrom is when the key may start signing: a new key is
	// published first, so that verifiers know it before they meet it.
	// Zero on insert: CreatedAt.
	ActiveFrom time.Time `db:"active_from"`
	// RetiredAt is set when an operator withdrew the key: it is neither
	// published nor used any more.
	RetiredAt *time.Time `db:"retired_at"`
}

// signingKeyLock is the advisory lock that serialises signing-key
// creation, so replicas starting at once agree on one current key.
const signingKeyLock = 0x746f75636b // distinct from schema's migration lock

const signingKeySelect = `SELECT kid, algorithm, private_key, public_jwk, created_at,
	COALESCE(active_from, created_at) AS active_from, retired_at
	FROM signing_keys ORDER BY created_at DESC, kid DESC`

// SigningKeys returns every signing key, retired ones too, newest first
// (ties by kid, so all replicas agree on which one is newest).
func (s *Store) SigningKeys(ctx context.Context) ([]SigningKey, error) {
	var ks []SigningKey
	if err := s.db.SelectContext(ctx, &ks, signingKeySelect); err != nil {
		return nil, fmt.Errorf("list signing keys: %w", pg.Translate(err))
	}
	return ks, nil
}

// EnsureSigningKey holds the signing-key lock while decide looks at the
// stored keys (newest first) and returns a key to insert, or nil if the
// current one will do. It reports whether a key was inserted.
func (s *Store) EnsureSigningKey(ctx context.Context, decide func(existing []SigningKey) (*SigningKey, error)) (bool, error) {
	return s.EditSigningKeys(ctx, func(existing []SigningKey) ([]SigningKey, error) {
		k, err := decide(existing)
		if err != nil || k == nil {
			return nil, err
		}
		return []SigningKey{*k}, nil
	})
}

// EditSigningKeys holds the signing-key lock while decide looks at every
// stored key (newest first, retired ones too) and returns the keys to
// write: a new kid is inserted; a stored one gets the ActiveFrom and
// RetiredAt given (the key material never changes). It reports whether
// anything was written.
func (s *Store) EditSigningKeys(ctx context.Context, decide func(existing []SigningKey) ([]SigningKey, error)) (bool, error) {
	wrote := false
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		// Transaction-scoped: released by commit or rollback, even if the
		// connection is reused.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, signingKeyLock); err != nil {
			return fmt.Errorf("lock signing keys: %w", err)
		}
		var ks []SigningKey
		if err := tx.SelectContext(ctx, &ks, signingKeySelect); err != nil {
			return fmt.Errorf("list signing keys: %w", err)
		}
		writes, err := decide(ks)
		if err != nil {
			return err
		}
		for _, k := range writes {
			if k.ActiveFrom.IsZero() {
				k.ActiveFrom = k.CreatedAt
			}
			if _, err := tx.NamedExecContext(ctx, `INSERT INTO signing_keys
				(kid, algorithm, private_key, public_jwk, created_at, active_from, retired_at)
				VALUES (:kid, :algorithm, :private_key, :public_jwk, :created_at, :active_from, :retired_at)
				ON CONFLICT (kid) DO UPDATE SET active_from = EXCLUDED.active_from, retired_at = EXCLUDED.retired_at`, k); err != nil {
				return fmt.Errorf("write signing key: %w", err)
			}
			wrote = true
		}
		return nil
	})
	return wrote, err
}
