package auth

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVerifiedCacheLifetime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	var c verifiedCache

	_, err := c.get("a", now)
	assert.ErrorIs(t, err, errNotCached)

	long := verifiedToken{c: claims{JTI: "long"}, exp: now.Add(time.Hour)}
	c.put("a", long, now)
	got, err := c.get("a", now.Add(verifiedCacheTTL-time.Millisecond))
	require.NoError(t, err)
	assert.Equal(t, "long", got.c.JTI)
	_, err = c.get("a", now.Add(verifiedCacheTTL))
	assert.ErrorIs(t, err, errNotCached, "a long-lived token is checked again after the TTL")

	short := verifiedToken{c: claims{JTI: "short"}, exp: now.Add(10 * time.Second)}
	c.put("b", short, now)
	_, err = c.get("b", now.Add(10*time.Second))
	assert.ErrorIs(t, err, errNotCached, "never remembered past its exp")
	_, err = c.get("c", now)
	assert.ErrorIs(t, err, errNotCached, "only the very token is remembered")
}

func TestVerifiedCacheStaysBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	var c verifiedCache
	tok := verifiedToken{exp: now.Add(time.Hour)}
	for i := range verifiedCacheSize + 10 {
		c.put(fmt.Sprint("token-", i), tok, now)
		require.LessOrEqual(t, len(c.m), verifiedCacheSize)
	}
	_, err := c.get(fmt.Sprint("token-", verifiedCacheSize+9), now)
	assert.NoError(t, err, "the newest entry survives a purge")
}
