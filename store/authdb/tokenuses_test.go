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
	"github.com/touchpoint/touchpoint/storeset"
)

func TestTokenUses(t *testing.T) {
	t.Parallel()
	all := storeset.New(testdb.New(t), "P7D")
	st := all.Auth
	ctx := context.Background()
	t0 := time.Date(2026, 5, 6, 7, 8, 9, 123456000, time.UTC)
	st.SetClock(func() time.Time { return t0 })

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

	// A use is forgotten with its month (by expiry), once the month is
	// over: no token of it is valid any more.
	june := time.Date(2026, 6, 1, 0, 30, 0, 0, time.UTC)
	require.NoError(t, st.RecordTokenUses(ctx, []authdb.TokenUse{{JTI: "june", LastUsedAt: t0, ExpiresAt: june}}))
	st.SetClock(func() time.Time { return t0.Add(30 * time.Minute) })
	r, ran, err := all.Partitions.Maintain(ctx, store.PartitionOptions(0))
	require.NoError(t, err)
	require.True(t, ran)
	assert.NotContains(t, r.Dropped, "token_uses_2026_05", "May is not over")
	st.SetClock(func() time.Time { return june.Add(time.Hour) })
	r, _, err = all.Partitions.Maintain(ctx, store.PartitionOptions(0))
	require.NoError(t, err)
	assert.Contains(t, r.Dropped, "token_uses_2026_05")
	_, ok, err = st.TokenLastUse(ctx, "a")
	require.NoError(t, err)
	assert.False(t, ok)
	_, ok, err = st.TokenLastUse(ctx, "june")
	require.NoError(t, err)
	assert.True(t, ok, "a token of June may still be used")
}
