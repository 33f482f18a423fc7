package authdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/store/pg"
)

// TokenUse is the latest known use of an access token, keyed by its jti.
type TokenUse struct {
	JTI        string
	LastUsedAt time.Time
	ExpiresAt  time.Time // the token's exp: after it the row is useless
}

// tokenUseBatch bounds one upsert statement.
const tokenUseBatch = 1000

// RecordTokenUses upserts uses in batches. A row only moves forward: the
// later of the stored and the new use wins, so replicas flushing in any
// order converge on the true last use. jtis must be unique within uses.
// The rows are partitioned by month of expiry: a token has one, so its
// row has one month, where (jti, expires_at) is unique.
func (s *Store) RecordTokenUses(ctx context.Context, uses []TokenUse) error {
	for len(uses) > 0 {
		n := min(len(uses), tokenUseBatch)
		jtis := make([]string, n)
		last := make([]string, n)
		exp := make([]string, n)
		for i, u := range uses[:n] {
			jtis[i] = u.JTI
			last[i] = u.LastUsedAt.UTC().Format(time.RFC3339Nano)
			exp[i] = u.ExpiresAt.UTC().Format(time.RFC3339Nano)
		}
		_, err := s.db.ExecContext(ctx, `INSERT INTO token_uses (jti, last_used_at, expires_at)
			SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[])
			ON CONFLICT ON CONSTRAINT token_uses_pkey DO UPDATE SET
				last_used_at = GREATEST(token_uses.last_used_at, EXCLUDED.last_used_at),
				expires_at = GREATEST(token_uses.expires_at, EXCLUDED.expires_at)`,
			pq.Array(jtis), pq.Array(last), pq.Array(exp))
		if err != nil {
			return fmt.Errorf("record token uses: %w", pg.Translate(err))
		}
		uses = uses[n:]
	}
	return nil
}

// TokenLastUse returns the stored last use of a token; ok is false when
// no use has been recorded.
func (s *Store) TokenLastUse(ctx context.Context, jti string) (last time.Time, ok bool, err error) {
	err = s.db.GetContext(ctx, &last, `SELECT last_used_at FROM token_uses WHERE jti = $1`, jti)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read token use: %w", pg.Translate(err))
	}
	return last, true, nil
}
