package pg_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/pgcluster"
	"github.com/touchpoint/touchpoint/internal/testclock"
	"github.com/touchpoint/touchpoint/store/pg"
)

// replicaEnv is a primary and its streaming replica of the test's own,
// with the store's pool on the primary and a Replica on the replica.
type replicaEnv struct {
	primary, replica *pgcluster.Server
	db               *pg.DB
	rep              *pg.Replica
	clock            *testclock.Clock
	reads            *readCounts
}

// readCounts counts OnRead's reasons.
type readCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *readCounts) add(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[reason]++
}

func (c *readCounts) get() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

func newReplicaEnv(t *testing.T) *replicaEnv {
	t.Helper()
	e := &replicaEnv{primary: pgcluster.Primary(t), clock: testclock.New(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)),
		reads: &readCounts{n: map[string]int{}}}
	e.replica = e.primary.Replica(t)
	pool := openDB(t, e.primary.URL("postgres"))
	_, err := pool.Exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	require.NoError(t, err)
	e.db = pg.NewDB(pool)
	e.rep, err = pg.OpenReplica(e.replica.URL("postgres"), pool, 4, pg.ReplicaOptions{Now: e.clock.Now, OnRead: e.reads.add})
	require.NoError(t, err)
	t.Cleanup(func() { e.rep.Close() })
	e.db.UseReplica(e.rep)
	e.caughtUp(t)
	return e
}

func openDB(t *testing.T, url string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("postgres", url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// caughtUp waits until the replica has replayed everything the primary
// has written, then probes until the replica has replayed the primary's
// position of the probe itself: its lag is then 0 on the test's clock.
func (e *replicaEnv) caughtUp(t *testing.T) {
	t.Helper()
	e.replica.CaughtUp(t, e.primary)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		e.rep.Probe(context.Background())
		s := e.rep.Status()
		assert.Equal(c, pg.StateOK, s.State, "%v", s.Err)
		assert.Zero(c, s.Lag)
	}, time.Minute, 20*time.Millisecond)
}

// insert adds a row on the primary.
func (e *replicaEnv) insert(t *testing.T, id int) {
	t.Helper()
	_, err := e.db.Pool().Exec(`INSERT INTO items VALUES ($1)`, id)
	require.NoError(t, err)
}

// count is the rows a read of ctx finds.
func (e *replicaEnv) count(t *testing.T, ctx context.Context) int {
	t.Helper()
	var n int
	require.NoError(t, e.db.Read(ctx).GetContext(ctx, &n, `SELECT count(*) FROM items`))
	return n
}

// TestReplicaReads: with replay paused, a row written on the primary is
// missing on the replica; which answer a read gets says where it went.
// Marked reads go to the replica; unmarked ones, and a client's reads
// within FreshFor of its own write, to the primary; a replica more than
// MaxLag behind sends every read to the primary until it catches up, and
// says so in its status, Ready and the read counts.
func TestReplicaReads(t *testing.T) {
	e := newReplicaEnv(t)
	bg := context.Background()
	e.replica.PauseReplay(t)
	e.insert(t, 1)

	assert.Equal(t, 1, e.count(t, bg), "an unmarked read goes to the primary")
	assert.Equal(t, 0, e.count(t, e.rep.Reads(bg, "")), "an anonymous read goes to the replica")
	assert.Equal(t, 0, e.count(t, e.rep.Reads(bg, "cli-b")), "another client's read goes to the replica")
	e.rep.Wrote("cli-a")
	assert.Equal(t, 1, e.count(t, e.rep.Reads(bg, "cli-a")), "a read right after the client's write goes to the primary")
	e.clock.Advance(pg.FreshFor - time.Millisecond)
	assert.Equal(t, 1, e.count(t, e.rep.Reads(bg, "cli-a")), "still within FreshFor")
	e.clock.Advance(time.Millisecond)
	assert.Equal(t, 0, e.count(t, e.rep.Reads(bg, "cli-a")), "FreshFor after its write, the replica again")
	assert.Equal(t, map[string]int{pg.ReadReplica: 3, pg.ReadOwnWrite: 2}, e.reads.get())

	// The replica falls behind: its lag is the time since the newest
	// primary position it has replayed.
	e.replica.ResumeReplay(t)
	e.caughtUp(t)
	e.replica.PauseReplay(t)
	e.clock.Advance(pg.MaxLag)
	e.insert(t, 2)
	e.rep.Probe(bg)
	assert.Equal(t, pg.StateOK, e.rep.Status().State, "exactly MaxLag behind still serves")
	assert.Equal(t, pg.MaxLag, e.rep.Status().Lag)
	e.rep.Wrote("cli-a")
	e.clock.Advance(pg.FreshFor)
	assert.Equal(t, 2, e.count(t, e.rep.Reads(bg, "cli-a")),
		"FreshFor after its write, a client still reads the primary while the replica lags more than that")

	e.clock.Advance(time.Second)
	e.rep.Probe(bg)
	s := e.rep.Status()
	assert.Equal(t, pg.StateLagging, s.State)
	assert.Equal(t, pg.MaxLag+pg.FreshFor+time.Second, s.Lag)
	var fb *pg.Fallback
	require.ErrorAs(t, e.rep.Ready(), &fb)
	assert.Equal(t, "lagging", fb.ReadinessState())
	assert.Equal(t, 2, e.count(t, e.rep.Reads(bg, "")), "a lagging replica serves no read")
	assert.Equal(t, 1, e.reads.get()[pg.ReadLagging])

	e.replica.ResumeReplay(t)
	e.caughtUp(t)
	assert.NoError(t, e.rep.Ready())
	assert.Equal(t, 2, e.count(t, e.rep.Reads(bg, "")), "caught up, the replica has both rows")
	e.replica.PauseReplay(t)
	e.insert(t, 3)
	assert.Equal(t, 2, e.count(t, e.rep.Reads(bg, "")), "and serves reads again")
}

// TestReplicaDown: a read on a replica that has gone is repeated on the
// primary, and the replica serves no read until a probe finds it again;
// a replica that is down at start serves none either.
func TestReplicaDown(t *testing.T) {
	e := newReplicaEnv(t)
	bg := context.Background()
	e.insert(t, 1)
	e.caughtUp(t)
	e.replica.Stop(t)

	assert.Equal(t, 1, e.count(t, e.rep.Reads(bg, "")), "the failed read is answered by the primary")
	var fb *pg.Fallback
	require.ErrorAs(t, e.rep.Ready(), &fb)
	assert.Equal(t, "down", fb.ReadinessState())
	var ids []int
	require.NoError(t, e.db.Read(e.rep.Reads(bg, "")).SelectContext(bg, &ids, `SELECT id FROM items`))
	assert.Equal(t, []int{1}, ids, "the primary answers while the replica is down")
	assert.Equal(t, map[string]int{pg.ReadReplica: 1, pg.ReadDown: 2}, e.reads.get())
	e.rep.Probe(bg)
	assert.Equal(t, pg.StateDown, e.rep.Status().State)
	assert.ErrorContains(t, e.rep.Status().Err, "does not answer")

	e.replica.Start(t)
	e.caughtUp(t)
	e.replica.PauseReplay(t)
	e.insert(t, 2)
	assert.Equal(t, 1, e.count(t, e.rep.Reads(bg, "")), "back, the replica serves reads")

	// Opened while down: nothing is read from it before a probe.
	e.replica.Stop(t)
	late, err := pg.OpenReplica(e.replica.URL("postgres"), e.db.Pool(), 2, pg.ReplicaOptions{})
	require.NoError(t, err)
	defer late.Close()
	assert.Equal(t, pg.StateDown, late.Status().State)
	late.Probe(bg)
	assert.Equal(t, pg.StateDown, late.Status().State)
}

// TestReplicaOfAnotherServer: a read URL that names the primary itself,
// or another cluster, is never used.
func TestReplicaOfAnotherServer(t *testing.T) {
	e := newReplicaEnv(t)
	bg := context.Background()
	for name, tc := range map[string]struct{ url, err string }{
		"the primary":   {e.primary.URL("postgres"), "not a standby"},
		"other cluster": {pgcluster.Primary(t).URL("postgres"), "not a replica of DATABASE_URL"},
	} {
		r, err := pg.OpenReplica(tc.url, e.db.Pool(), 2, pg.ReplicaOptions{})
		require.NoError(t, err)
		r.Probe(bg)
		err = r.Ready()
		var fb *pg.Fallback
		require.True(t, errors.As(err, &fb), "%s: %v", name, err)
		assert.Equal(t, "down", fb.ReadinessState(), name)
		assert.ErrorContains(t, err, tc.err, name)
		r.Close()
	}
	// A standby of another cluster: its WAL positions mean nothing here.
	other := pgcluster.Primary(t).Replica(t)
	r, err := pg.OpenReplica(other.URL("postgres"), e.db.Pool(), 2, pg.ReplicaOptions{})
	require.NoError(t, err)
	defer r.Close()
	r.Probe(bg)
	assert.ErrorContains(t, r.Ready(), "not a replica of DATABASE_URL")
}
