package apiserver_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/internal/pgcluster"
	"github.com/touchpoint/touchpoint/internal/testclock"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/storeset"
)

// TestReadReplica runs the API on a primary of the test's own with a
// streaming replica whose replay the test pauses, so that what a read
// answers says where it went: a client's lists read the replica, except
// within FreshFor of its own write; the public reads read the replica; a
// replica more than MaxLag behind or down sends every read to the
// primary, and /readyz says so while staying ready.
func TestReadReplica(t *testing.T) {
	primary := pgcluster.Primary(t)
	replica := primary.Replica(t)
	ctx := context.Background()
	admin, err := sqlx.Open("postgres", primary.URL("postgres"))
	require.NoError(t, err)
	defer admin.Close()
	_, err = admin.Exec(`CREATE DATABASE touchpoint`)
	require.NoError(t, err)
	db, err := store.Open(ctx, primary.URL("touchpoint"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = schema.Migrate(ctx, db)
	require.NoError(t, err)

	clock := testclock.New(time.Now())
	var mu sync.Mutex
	reads := map[string]int{}
	rep, err := pg.OpenReplica(replica.URL("touchpoint"), db, 4, pg.ReplicaOptions{Now: clock.Now, OnRead: func(reason string) {
		mu.Lock()
		defer mu.Unlock()
		reads[reason]++
	}})
	require.NoError(t, err)
	t.Cleanup(func() { rep.Close() })
	st := storeset.New(db, "P7D")
	st.UseReplica(rep)
	e := newEnvWith(t, st, func(o *apiserver.Options) {
		o.Reads = rep
		o.Now = clock.Now // of the readiness cache too
		o.Readiness = func(context.Context) map[string]error { return map[string]error{"replica": rep.Ready()} }
	})
	reader := e.tokenFor(t, e.account, auth.GroupReadonly)
	caughtUp := func() {
		t.Helper()
		replica.CaughtUp(t, primary)
		rep.Probe(ctx)
		require.Equal(t, pg.StateOK, rep.Status().State, "%v", rep.Status().Err)
	}
	suppressions := func(token string) int {
		t.Helper()
		list, _ := items(t, e.do(t, http.MethodGet, "/suppressions", token, nil))
		return len(list)
	}
	displayName := func() any {
		t.Helper()
		r := e.do(t, http.MethodGet, "/public/accounts/"+e.account+"/reviews.jsonld", "", nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		return r.object(t)["name"]
	}
	readiness := func() (int, any) {
		t.Helper()
		clock.Advance(2 * time.Second) // past the readiness cache
		r := e.do(t, http.MethodGet, "/readyz", "", nil)
		return r.status, r.object(t)
	}

	caughtUp()
	replica.PauseReplay(t)
	e.create(t, "/suppressions", map[string]any{"address": "ann@example.com"})
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPatch, "/account", e.token, `{"displayName":"Renamed"}`).status)

	assert.Equal(t, 1, suppressions(e.token), "the writer reads its own write: the primary")
	assert.Equal(t, 0, suppressions(reader), "another client reads the replica")
	assert.Equal(t, "A", displayName(), "the public reads read the replica")
	clock.Advance(pg.FreshFor)
	assert.Equal(t, 0, suppressions(e.token), "FreshFor after its write, the writer reads the replica too")
	status, body := readiness()
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, map[string]any{"status": "ok", "dependencies": map[string]any{"postgresql": "ok", "replica": "ok"}}, body)

	// More than MaxLag behind: every read from the primary, and readiness
	// says so while the API stays ready.
	clock.Advance(pg.MaxLag + time.Second)
	rep.Probe(ctx)
	assert.Equal(t, 1, suppressions(reader), "a lagging replica: the primary")
	assert.Equal(t, "Renamed", displayName())
	status, body = readiness()
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, map[string]any{"status": "degraded", "dependencies": map[string]any{"postgresql": "ok", "replica": "lagging"}}, body)

	replica.ResumeReplay(t)
	caughtUp()
	assert.Equal(t, 1, suppressions(reader), "caught up, the replica has it")
	status, body = readiness()
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, map[string]any{"status": "ok", "dependencies": map[string]any{"postgresql": "ok", "replica": "ok"}}, body)

	// Down: the reads it would serve go to the primary.
	replica.Stop(t)
	e.create(t, "/suppressions", map[string]any{"address": "bob@example.com"})
	assert.Equal(t, 2, suppressions(reader), "a replica that is down: the primary")
	rep.Probe(ctx)
	assert.Equal(t, "Renamed", displayName())
	status, body = readiness()
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, map[string]any{"status": "degraded", "dependencies": map[string]any{"postgresql": "ok", "replica": "down"}}, body)

	mu.Lock()
	defer mu.Unlock()
	for _, reason := range []string{pg.ReadReplica, pg.ReadOwnWrite, pg.ReadLagging, pg.ReadDown} {
		assert.Positive(t, reads[reason], "reads counted as %s: %v", reason, reads)
	}
}
