package authdb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/authdb"
)

func TestTokenUses(t *testing.T) {
	t.Parallel()
	all := store.New(testdb.New(t), "P7D")
	st := all.Auth
	ctx := context.Background()
	t0 := time.Date(2026, 5, 6, 7, 8, 9, 123456000, time.UTC)

	_, ok, err := st.TokenLastUse(ctx, "none")
	require.NoError(t, err)
	assert.False(t, ok)

	require.NoError(t, st.RecordTokenUses(ctx, []authdb.TokenUse{
		{JTI: "a", LastUsedAt: t0, ExpiresAt: t0.Add(time.Hour)},
		{JTI: "b", LastUsedAt: t0, ExpiresAt: t0.Add(time.Minute)},
	}))
	last, ok, err := st.TokenLastUse(ctx, "a")
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, t0.Equal(last), "microsecond precision kept: %v", last)

	// An older use (a late flush from another replica) never moves it back.
	require.NoError(t, st.RecordTokenUses(ctx, []authdb.TokenUse{{JTI: "a", LastUsedAt: t0.Add(-time.Minute), ExpiresAt: t0.Add(time.Hour)}}))
	last, _, err = st.TokenLastUse(ctx, "a")
	require.NoError(t, err)
	assert.True(t, t0.Equal(last))
	require.NoError(t, st.RecordTokenUses(ctx, []authdb.TokenUse{{JTI: "a", LastUsedAt: t0.Add(time.Second), ExpiresAt: t0.Add(time.Hour)}}))
	last, _, err = st.TokenLastUse(ctx, "a")
	require.NoError(t, err)
	assert.True(t, t0.Add(time.Second).Equal(last))

	// Batches larger than one statement.
	many := make([]authdb.TokenUse, 2500)
	for i := range many {
		many[i] = authdb.TokenUse{JTI: fmt.Sprint("m", i), LastUsedAt: t0, ExpiresAt: t0.Add(time.Minute)}
	}
	require.NoError(t, st.RecordTokenUses(ctx, many))

	st.SetClock(func() time.Time { return t0.Add(30 * time.Minute) })
	c, ran, err := all.Housekeep(ctx, time.Hour, 0)
	require.NoError(t, err)
	require.True(t, ran)
	assert.EqualValues(t, 2501, c.TokenUses) // b and the batch; a lives on
	_, ok, err = st.TokenLastUse(ctx, "a")
	require.NoError(t, err)
	assert.True(t, ok)
}
