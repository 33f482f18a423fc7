package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// SigningKey is one of the built-in issuer's signing keys. PrivateKey is
// sealed by the issuer; the store never sees it in the clear.
type SigningKey struct {
	KID        string    `db:"kid"`
	Algorithm  string    `db:"algorithm"`
	PrivateKey []byte    `db:"private_key"`
	PublicJWK  string    `db:"public_jwk"` // the JSON Web Key (JSON), public part only
	CreatedAt  time.Time `db:"created_at"`
}

// signingKeyLock is the advisory lock that serialises signing-key
// creation, so replicas starting at once agree on one current key.
const signingKeyLock = 0x746f75636b // distinct from schema's migration lock

// SigningKeys returns every signing key, newest first (ties by kid, so all
// replicas agree on which one is newest).
func (s *Store) SigningKeys(ctx context.Context) ([]SigningKey, error) {
	var ks []SigningKey
	err := s.db.SelectContext(ctx, &ks, `SELECT kid, algorithm, private_key, public_jwk, created_at
		FROM signing_keys ORDER BY created_at DESC, kid DESC`)
	if err != nil {
		return nil, fmt.Errorf("list signing keys: %w", translate(err))
	}
	return ks, nil
}

// EnsureSigningKey holds the signing-key lock while decide looks at the
// stored keys (newest first) and returns a key to insert, or nil if the
// current one will do. It reports whether a key was inserted.
func (s *Store) EnsureSigningKey(ctx context.Context, decide func(existing []SigningKey) (*SigningKey, error)) (bool, error) {
	inserted := false
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		// Transaction-scoped: released by commit or rollback, even if the
		// connection is reused.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, signingKeyLock); err != nil {
			return fmt.Errorf("lock signing keys: %w", err)
		}
		var ks []SigningKey
		if err := tx.SelectContext(ctx, &ks, `SELECT kid, algorithm, private_key, public_jwk, created_at
			FROM signing_keys ORDER BY created_at DESC, kid DESC`); err != nil {
			return fmt.Errorf("list signing keys: %w", err)
		}
		k, err := decide(ks)
		if err != nil || k == nil {
			return err
		}
		if _, err := tx.NamedExecContext(ctx, `INSERT INTO signing_keys (kid, algorithm, private_key, public_jwk, created_at)
			VALUES (:kid, :algorithm, :private_key, :public_jwk, :created_at)`, k); err != nil {
			return fmt.Errorf("insert signing key: %w", err)
		}
		inserted = true
		return nil
	})
	return inserted, err
}
