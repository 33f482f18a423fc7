package pg_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// TestPlannedReadsKeepAGenericPlan: a read over the monthly partitions
// that ReadPlanned runs again and again is planned once for its
// connection. PostgreSQL keeps its generic plan (pg_prepared_statements
// counts it), and the rows are the rows of the read unprepared. Past the
// set's bound, further texts still run, unprepared.
func TestPlannedReadsKeepAGenericPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pg.OpenPool(ctx, testdb.URL(t, testdb.New(t)), 1) // one connection: its statements are the ones counted
	require.NoError(t, err)
	defer pool.Close()
	_, err = pool.ExecContext(ctx, `INSERT INTO token_uses (jti, last_used_at, expires_at)
		SELECT 'jti-' || i, now(), now() + (i % 40) * interval '1 day' FROM generate_series(1, 200) i`)
	require.NoError(t, err)
	db := pg.NewDB(pool)

	const list = `SELECT jti FROM token_uses WHERE jti LIKE $1 ORDER BY expires_at DESC, jti LIMIT 5`
	var want []string
	require.NoError(t, pool.SelectContext(ctx, &want, list, "jti-1%"))
	require.Len(t, want, 5)
	for range 10 {
		var got []string
		require.NoError(t, db.ReadPlanned(ctx).SelectContext(ctx, &got, list, "jti-1%"))
		assert.Equal(t, want, got)
	}
	var plans struct {
		Generic int `db:"generic_plans"`
		Custom  int `db:"custom_plans"`
	}
	require.NoError(t, pool.GetContext(ctx, &plans,
		`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1`, list))
	assert.Equal(t, 10, plans.Generic+plans.Custom, "every read ran the one statement")
	assert.Positive(t, plans.Generic, "PostgreSQL moved to the generic plan")

	// Beyond the bound, a new text runs unprepared and answers the same.
	for i := range 40 {
		var n int
		q := fmt.Sprintf(`SELECT count(*) + %d FROM token_uses WHERE expires_at > $1`, i)
		require.NoError(t, db.ReadPlanned(ctx).GetContext(ctx, &n, q, time.Now().Add(-time.Hour)))
		assert.Equal(t, 200+i, n)
	}
	var prepared int
	require.NoError(t, pool.GetContext(ctx, &prepared, `SELECT count(*) FROM pg_prepared_statements`))
	assert.Equal(t, 32, prepared, "the set stops at its bound")
}
