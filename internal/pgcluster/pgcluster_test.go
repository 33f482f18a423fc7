package pgcluster_test

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/pgcluster"
)

// TestReplicaStreams: a row written on the primary after the replica was
// made reaches the replica, which refuses writes of its own; a stopped
// replica starts again and catches up.
func TestReplicaStreams(t *testing.T) {
	primary := pgcluster.Primary(t)
	replica := primary.Replica(t)
	ctx := context.Background()

	p := open(t, primary.URL("postgres"))
	r := open(t, replica.URL("postgres"))
	var standby bool
	require.NoError(t, r.QueryRowContext(ctx, `SELECT pg_is_in_recovery()`).Scan(&standby))
	require.True(t, standby, "the replica is a standby")

	_, err := p.ExecContext(ctx, `CREATE TABLE t (v int); INSERT INTO t VALUES (1)`)
	require.NoError(t, err)
	requireRows(t, r, 1)
	_, err = r.ExecContext(ctx, `INSERT INTO t VALUES (2)`)
	require.ErrorContains(t, err, "read-only transaction")

	replica.Stop(t)
	require.Error(t, r.PingContext(ctx), "the stopped replica answers")
	_, err = p.ExecContext(ctx, `INSERT INTO t VALUES (3)`)
	require.NoError(t, err)
	replica.Start(t)
	requireRows(t, r, 2)
}

// TestMissingBinariesFailUnderCI runs TestReplicaStreams again in a child
// process whose binaries' folder is empty: skipped outside CI, failed
// under CI=true, so CI never passes a replica test that did not run.
func TestMissingBinariesFailUnderCI(t *testing.T) {
	if os.Getenv("PGCLUSTER_CHILD") != "" {
		t.Skip("a child of the test")
	}
	run := func(ci string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReplicaStreams$", "-test.v")
		cmd.Env = append(os.Environ(), pgcluster.BinEnv+"="+t.TempDir(), "CI="+ci, "PGCLUSTER_CHILD=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("")
	require.NoError(t, err, out)
	assert.Contains(t, out, "--- SKIP: TestReplicaStreams", out)

	out, err = run("true")
	require.Error(t, err, out)
	assert.Contains(t, out, "--- FAIL: TestReplicaStreams", out)
	assert.Contains(t, out, "CI=true requires it", out)
}

func open(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// requireRows waits until table t of db has n rows.
func requireRows(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var got int
		if assert.NoError(c, db.QueryRow(`SELECT count(*) FROM t`).Scan(&got)) {
			assert.Equal(c, n, got)
		}
	}, time.Minute, 20*time.Millisecond)
}
