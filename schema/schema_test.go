package schema_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/schema"
)

func TestMigrationsAreNumberedAndOrdered(t *testing.T) {
	t.Parallel()
	ms, err := schema.Migrations()
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	for i, m := range ms {
		assert.Equal(t, i+1, m.Version, "versions are consecutive from 1: %s", m.Name)
	}
}

func TestMigrateTwiceAppliesOnce(t *testing.T) {
	t.Parallel()
	db := testdb.New(t) // migrated once already
	applied, err := schema.Migrate(context.Background(), db)
	require.NoError(t, err)
	assert.Empty(t, applied, "a second run applies nothing")
	ms, err := schema.Migrations()
	require.NoError(t, err)
	var n int
	require.NoError(t, db.Get(&n, `SELECT count(*) FROM schema_migrations`))
	assert.Equal(t, len(ms), n)
}

func TestConcurrentMigratorsApplyEachMigrationOnce(t *testing.T) {
	t.Parallel()
	url := testdb.NewURL(t)
	const migrators = 4
	results := make([][]string, migrators)
	var wg sync.WaitGroup
	for i := range migrators {
		wg.Go(func() {
			db, err := sqlx.Open("postgres", url)
			if !assert.NoError(t, err) {
				return
			}
			defer db.Close()
			results[i], err = schema.Migrate(context.Background(), db)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	ms, err := schema.Migrations()
	require.NoError(t, err)
	var all []string
	for _, r := range results {
		all = append(all, r...)
	}
	assert.Len(t, all, len(ms), "every migration applied by exactly one migrator")
	assert.ElementsMatch(t, names(ms), all)
}

func names(ms []schema.Migration) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}
