package pg_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

func TestEnsureAndDropDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := "tp_test_ensure_" + pg.NewID("x")[2:10]
	dsn, err := pg.DatabaseURL(testdb.ServerURL(), name)
	require.NoError(t, err)
	t.Cleanup(func() { pg.DropDatabase(context.Background(), testdb.ServerURL(), name) })

	require.NoError(t, pg.EnsureDatabase(ctx, dsn), "created")
	require.NoError(t, pg.EnsureDatabase(ctx, dsn), "there already")
	db, err := pg.Open(ctx, dsn)
	require.NoError(t, err, "the database exists")
	db.Close()

	require.NoError(t, pg.DropDatabase(ctx, testdb.ServerURL(), name))
	require.NoError(t, pg.DropDatabase(ctx, testdb.ServerURL(), name), "gone already")
	_, err = pg.Open(ctx, dsn)
	require.Error(t, err, "the database is gone")

	require.ErrorContains(t, pg.EnsureDatabase(ctx, "postgres://127.0.0.1:5432"), "names no database")
}
