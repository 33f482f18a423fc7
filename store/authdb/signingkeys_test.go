package authdb_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store/authdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

func TestEnsureSigningKeyCreatesOneUnderConcurrency(t *testing.T) {
	t.Parallel()
	st := authdb.New(pg.NewDB(testdb.New(t)))
	ctx := context.Background()
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	// Every caller wants a key only if none exists: the lock must make
	// exactly one of them insert.
	var wg sync.WaitGroup
	var mu sync.Mutex
	inserted := 0
	for i := range 8 {
		wg.Go(func() {
			ok, err := st.EnsureSigningKey(ctx, func(existing []authdb.SigningKey) (*authdb.SigningKey, error) {
				if len(existing) > 0 {
					return nil, nil
				}
				return &authdb.SigningKey{KID: "k" + string(rune('a'+i)), Algorithm: "RS256",
					PrivateKey: []byte{1, 2, 3}, PublicJWK: `{"kty":"RSA"}`, CreatedAt: created}, nil
			})
			assert.NoError(t, err)
			if ok {
				mu.Lock()
				inserted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, inserted)

	ks, err := st.SigningKeys(ctx)
	require.NoError(t, err)
	require.Len(t, ks, 1)
	assert.Equal(t, []byte{1, 2, 3}, ks[0].PrivateKey)
	assert.JSONEq(t, `{"kty":"RSA"}`, ks[0].PublicJWK)
	assert.True(t, created.Equal(ks[0].CreatedAt))

	// A newer key is listed first.
	_, err = st.EnsureSigningKey(ctx, func([]authdb.SigningKey) (*authdb.SigningKey, error) {
		return &authdb.SigningKey{KID: "newer", Algorithm: "RS256", PrivateKey: []byte{4}, PublicJWK: `{}`, CreatedAt: created.Add(time.Hour)}, nil
	})
	require.NoError(t, err)
	ks, err = st.SigningKeys(ctx)
	require.NoError(t, err)
	require.Len(t, ks, 2)
	assert.Equal(t, "newer", ks[0].KID)
}

func TestEditSigningKeysUpdatesActivationAndRetirement(t *testing.T) {
	t.Parallel()
	st := authdb.New(pg.NewDB(testdb.New(t)))
	ctx := context.Background()
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	k := authdb.SigningKey{KID: "k1", Algorithm: "RS256", PrivateKey: []byte{1}, PublicJWK: `{}`, CreatedAt: created}
	_, err := st.EnsureSigningKey(ctx, func([]authdb.SigningKey) (*authdb.SigningKey, error) { return &k, nil })
	require.NoError(t, err)
	ks, err := st.SigningKeys(ctx)
	require.NoError(t, err)
	require.Len(t, ks, 1)
	assert.True(t, created.Equal(ks[0].ActiveFrom), "active from its creation unless told otherwise")
	assert.Nil(t, ks[0].RetiredAt)

	retired, active := created.Add(time.Hour), created.Add(time.Minute)
	wrote, err := st.EditSigningKeys(ctx, func(existing []authdb.SigningKey) ([]authdb.SigningKey, error) {
		e := existing[0]
		e.RetiredAt, e.ActiveFrom = &retired, active
		e.PrivateKey = []byte{9} // key material is never rewritten
		return []authdb.SigningKey{e}, nil
	})
	require.NoError(t, err)
	assert.True(t, wrote)
	ks, err = st.SigningKeys(ctx)
	require.NoError(t, err)
	require.Len(t, ks, 1)
	require.NotNil(t, ks[0].RetiredAt)
	assert.True(t, retired.Equal(*ks[0].RetiredAt))
	assert.True(t, active.Equal(ks[0].ActiveFrom))
	assert.Equal(t, []byte{1}, ks[0].PrivateKey)
}
