package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/store/authdb"
)

// refreshingVerifier starts a Verifier of the built-in issuer whose key
// set is refetched every refresh (real time), and waits for discovery.
func (e *env) refreshingVerifier(t *testing.T, refresh, minGap time.Duration) *auth.Verifier {
	t.Helper()
	return startVerifier(t, auth.Options{Store: e.st.Auth, Issuers: []auth.Issuer{{URL: e.issuerURL}}, BuiltInIssuer: e.issuerURL,
		Audience: audience, DiscoveryRetry: 10 * time.Millisecond, KeyRefresh: refresh, KeyRefetchInterval: minGap,
		Now: e.clock.Now, Logger: e.log})
}

func TestRetiredKeyStopsVerifyingWithinOneRefresh(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The issuer's max-age (60s) is capped by the period.
	const refresh = 200 * time.Millisecond
	v := e.refreshingVerifier(t, refresh, 50*time.Millisecond)
	ctx := context.Background()
	tok := e.token(t)
	accept(t, v, tok) // verified, and remembered as verified
	hdr, _ := parts(t, tok)

	// The key leaks: ops publish a new one and retire the old at once.
	_, err := e.issuer.Rotate(ctx)
	require.NoError(t, err)
	require.NoError(t, e.issuer.Retire(ctx, hdr["kid"].(string)))
	start := time.Now()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := v.Authenticate(ctx, tok)
		assert.ErrorIs(c, err, auth.ErrInvalidToken)
	}, 10*time.Second, 10*time.Millisecond, "a token of the retired key must stop verifying")
	t.Logf("rejected %s after the retirement (refresh %s)", time.Since(start), refresh)
	reject(t, v, tok, "unknown signing key")

	// Tokens of the new key verify.
	accept(t, v, e.token(t))
}

func TestCacheHeadersBringTheRefreshForward(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	var hits atomic.Int32
	var mu sync.Mutex
	cacheControl := "public, max-age=1"
	var url string
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": url, "jwks_uri": url + "/certs"})
	})
	mux.HandleFunc("/certs", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mu.Lock()
		w.Header().Set("Cache-Control", cacheControl)
		mu.Unlock()
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k", Algorithm: "ES256", Use: "sig"}}})
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	url = ts.URL

	e := newEnv(t)
	// A period of five minutes: only the header can make it refetch
	// during this test.
	startVerifier(t, auth.Options{Store: e.st.Auth, Issuers: []auth.Issuer{{URL: url}}, Audience: audience,
		DiscoveryRetry: 10 * time.Millisecond, KeyRefresh: 5 * time.Minute, KeyRefetchInterval: 100 * time.Millisecond,
		Now: e.clock.Now, Logger: e.log})
	require.Eventually(t, func() bool { return hits.Load() >= 3 }, 10*time.Second, 10*time.Millisecond,
		"max-age=1 makes the key set refetch every second")

	// no-store: as often as the least gap allows, and no more.
	mu.Lock()
	cacheControl = "no-store"
	mu.Unlock()
	before, start := hits.Load(), time.Now()
	require.Eventually(t, func() bool { return hits.Load() >= before+5 }, 10*time.Second, 5*time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(start), 4*100*time.Millisecond, "never more often than the least gap")
}

func TestNewKeyIsKnownBeforeItSigns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Refetches for unknown kids are held back for an hour (of the test
	// clock): only the periodic refresh can teach the verifier a new key.
	v := e.refreshingVerifier(t, 100*time.Millisecond, time.Hour)
	ctx := context.Background()
	info, err := e.issuer.Rotate(ctx)
	require.NoError(t, err)
	hits := e.jwksHits.Load()
	require.Eventually(t, func() bool { return e.jwksHits.Load() > hits }, 10*time.Second, 5*time.Millisecond,
		"a periodic refresh after the rotation")

	e.clock.Advance(info.ActiveFrom.Sub(e.clock.Now()))
	require.Equal(t, info.KID, e.issuer.CurrentKeyID())
	tok := e.token(t)
	hdr, _ := parts(t, tok)
	require.Equal(t, info.KID, hdr["kid"])
	p := accept(t, v, tok, "the new key was published before it signed")
	assert.Equal(t, e.client.ID, p.ClientID)
}

func TestKeyRefreshIsBounded(t *testing.T) {
	t.Parallel()
	_, err := auth.New(auth.Options{Store: &authdb.Store{}, Issuers: []auth.Issuer{{URL: "http://x"}}, Audience: audience,
		KeyRefresh: 6 * time.Minute})
	require.ErrorContains(t, err, "key refresh")
}
