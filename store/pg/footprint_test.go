package pg_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// TestFootprint: two readings around some writes tell the rows, bytes
// and WAL they cost, a partition counted as its parent.
func TestFootprint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	_, err := db.Exec(`CREATE TABLE fp_plain (id int PRIMARY KEY, v text);
		CREATE TABLE fp_parted (id int, at date, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
		CREATE TABLE fp_parted_1 PARTITION OF fp_parted FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
		CREATE TABLE fp_parted_2 PARTITION OF fp_parted FOR VALUES FROM ('2026-02-01') TO ('2026-03-01')`)
	require.NoError(t, err)
	before, err := pg.ReadFootprint(ctx, db)
	require.NoError(t, err)

	conn, err := db.Connx(ctx) // the statistics of this session, flushed at once below
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `INSERT INTO fp_plain SELECT g, repeat('x', 100) FROM generate_series(1, 500) g;
		INSERT INTO fp_parted SELECT g, date '2026-01-10' + (g % 40) FROM generate_series(1, 300) g;
		UPDATE fp_plain SET v = 'y' WHERE id <= 10;
		DELETE FROM fp_plain WHERE id > 490`)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, `SELECT pg_stat_force_next_flush()`)
	require.NoError(t, err)
	conn.Close()

	after, err := pg.ReadFootprint(ctx, db)
	require.NoError(t, err)
	tables := map[string]pg.TableFootprint{}
	for _, tf := range after.Tables {
		tables[tf.Table] = tf
	}
	assert.NotContains(t, tables, "fp_parted_1", "a partition counts as its parent")
	assert.EqualValues(t, 490, tables["fp_plain"].Rows)
	assert.EqualValues(t, 300, tables["fp_parted"].Rows)
	for _, name := range []string{"fp_plain", "fp_parted"} {
		assert.Positive(t, tables[name].TableBytes, name)
		assert.Positive(t, tables[name].IndexBytes, name)
	}
	assert.GreaterOrEqual(t, after.Inserted-before.Inserted, int64(800))
	assert.GreaterOrEqual(t, after.Updated-before.Updated, int64(10))
	assert.GreaterOrEqual(t, after.Deleted-before.Deleted, int64(10))
	assert.Greater(t, after.WALBytes-before.WALBytes, int64(800*100), "the rows went through the WAL")
}
