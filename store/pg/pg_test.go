package pg_test

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

func TestValidID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		"ety-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b":  true,
		"ety-0B5E8F3C-8A3E-4F3E-9A57-1C2D3E4F5A6B":  false, // not canonical lowercase
		"chl-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b":  false, // other prefix
		"ety-0b5e8f3c8a3e4f3e9a571c2d3e4f5a6b":      false,
		"ety-../../etc/passwd":                      false,
		"":                                          false,
		"ety-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6bx": false,
	} {
		if got := pg.ValidID("ety", id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestTimeIDs: an id of NewTimeID is a valid, random UUIDv7 of its
// millisecond, which IDTime reads back, as it reads touchpoint_uuid7's;
// an id made before (UUIDv4) has no time.
func TestTimeIDs(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 23, 59, 59, 999_000_000, time.UTC)
	a, b := pg.NewTimeID("evt", at), pg.NewTimeID("evt", at)
	require.NotEqual(t, a, b)
	for _, id := range []string{a, b} {
		assert.True(t, pg.ValidID("evt", id), id)
		got, ok := pg.IDTime(id)
		require.True(t, ok, id)
		assert.Equal(t, at, got)
	}
	assert.Less(t, pg.NewTimeID("evt", at.Add(-time.Millisecond)), a, "ids sort by time")
	_, ok := pg.IDTime(pg.NewID("evt"))
	assert.False(t, ok)

	db := testdb.New(t)
	var fromSQL string
	require.NoError(t, db.Get(&fromSQL, `SELECT 'msg-' || touchpoint_uuid7($1)`, at))
	assert.True(t, pg.ValidID("msg", fromSQL), fromSQL)
	got, ok := pg.IDTime(fromSQL)
	require.True(t, ok, fromSQL)
	assert.Equal(t, at, got)
}

// TestPoolsTurnJITOff: every connection of a pool Open makes runs without
// JIT compilation, whichever connection of the pool a statement gets.
func TestPoolsTurnJITOff(t *testing.T) {
	t.Parallel()
	db, err := pg.OpenPool(context.Background(), testdb.URL(t, testdb.New(t)), 3)
	require.NoError(t, err)
	defer db.Close()
	conns := make([]*sqlx.Conn, 3) // three connections at once: three made
	for i := range conns {
		conns[i], err = db.Connx(context.Background())
		require.NoError(t, err)
		defer conns[i].Close()
		var jit string
		require.NoError(t, conns[i].GetContext(context.Background(), &jit, `SHOW jit`))
		assert.Equal(t, "off", jit, "connection %d", i)
	}
}
