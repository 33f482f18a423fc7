package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/internal/testclock"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/authdb"
	"github.com/touchpoint/touchpoint/storeset"
)

const (
	secretKey = "test-secret-key-0123456789abcdef0123456789"
	audience  = "http://api.touchpoint.test"
	flush     = 2 * time.Second
	idle      = 300 * time.Second
)

// env is a built-in issuer in httptest on a fresh database, with one
// client, a switch that takes the issuer down, and a JWKS hit counter.
type env struct {
	clock     *testclock.Clock
	st        *store.Store
	issuer    *authserver.Server
	issuerURL string
	down      atomic.Bool
	jwksHits  atomic.Int32
	client    authdb.Client
	secret    string
	log       *slog.Logger
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{st: storeset.New(testdb.New(t), "P7D"), clock: testclock.New(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)),
		log: slog.New(slog.NewTextHandler(t.Output(), nil))}
	e.st.SetClock(e.clock.Now)
	acc, _, err := e.st.Accounts.CreateAccount(ctx, "Acme")
	require.NoError(t, err)
	var hash []byte
	e.secret, hash = authserver.NewClientSecret(secretkey.Derive(secretKey, secretkey.ClientSecret))
	e.client, err = e.st.Auth.CreateClient(ctx, acc.ID, "shop", auth.GroupEvents, hash)
	require.NoError(t, err)

	ts := httptest.NewUnstartedServer(nil)
	e.issuerURL = "http://" + ts.Listener.Addr().String()
	e.issuer, err = authserver.New(ctx, authserver.Options{Store: e.st.Auth, Issuer: e.issuerURL, Audience: audience,
		SecretKey: secretKey, Now: e.clock.Now, Logger: e.log})
	require.NoError(t, err)
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if r.URL.Path == authserver.JWKSPath {
			e.jwksHits.Add(1)
		}
		e.issuer.ServeHTTP(w, r)
	})
	ts.Start()
	t.Cleanup(ts.Close)
	return e
}

func (e *env) token(t testing.TB) string {
	t.Helper()
	form := url.Values{"client_id": {e.client.ClientID}, "client_secret": {e.secret}, "grant_type": {"client_credentials"}}
	resp, err := http.PostForm(e.issuerURL+authserver.TokenPath, form)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return body.AccessToken
}

// verifier starts a Verifier for the built-in issuer (plus extra issuers)
// and waits until it has discovered them all, unless wait is false.
func (e *env) verifier(t testing.TB, wait bool, extra ...auth.Issuer) *auth.Verifier {
	t.Helper()
	v, err := auth.New(auth.Options{Store: e.st.Auth, Issuers: append([]auth.Issuer{{URL: e.issuerURL}}, extra...),
		BuiltInIssuer: e.issuerURL, Audience: audience, DiscoveryRetry: 10 * time.Millisecond,
		Now: e.clock.Now, Logger: e.log})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- v.Run(ctx) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })
	if wait {
		require.Eventually(t, func() bool { return v.Ready() == nil }, 10*time.Second, 5*time.Millisecond)
	}
	return v
}

// accept asserts the token is accepted now.
func accept(t *testing.T, v *auth.Verifier, tok string, msg ...any) auth.Principal {
	t.Helper()
	p, err := v.Authenticate(context.Background(), tok)
	require.NoError(t, err, msg...)
	return p
}

// reject asserts an invalid-token error with the given reason.
func reject(t *testing.T, v *auth.Verifier, tok, reason string) {
	t.Helper()
	p, err := v.Authenticate(context.Background(), tok)
	require.ErrorIs(t, err, auth.ErrInvalidToken)
	assert.Equal(t, "invalid token: "+reason, err.Error())
	assert.Zero(t, p)
}

func TestBuiltInTokenAccepted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.verifier(t, true)
	tok := e.token(t)
	p, err := v.Authenticate(context.Background(), tok)
	require.NoError(t, err)
	_, claims := parts(t, tok)
	assert.Equal(t, auth.Principal{AccountID: e.client.AccountID, ClientID: e.client.ID,
		AccessGroup: auth.GroupEvents, TokenID: claims["jti"].(string)}, p)

	// The account and group come from the stored client, not the token.
	_, err = e.st.DB().Exec(`UPDATE api_clients SET access_group = 'readonly' WHERE id = $1`, e.client.ID)
	require.NoError(t, err)
	e.clock.Advance(flush)
	p, err = v.Authenticate(context.Background(), tok)
	require.NoError(t, err)
	assert.Equal(t, auth.GroupReadonly, p.AccessGroup)
}

// parts decodes a token's header and claims without verifying them.
func parts(t *testing.T, tok string) (header, claims map[string]any) {
	t.Helper()
	segs := strings.Split(tok, ".")
	require.Len(t, segs, 3)
	for i, dst := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(segs[i])
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, dst))
	}
	return header, claims
}

func b64json(t *testing.T, v any) string {
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// signRaw signs a header and claims with any key, as a forger would.
func signRaw(t *testing.T, alg jose.SignatureAlgorithm, key any, header, claims map[string]any) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	for k, v := range header {
		if k != "alg" {
			opts.WithHeader(jose.HeaderKey(k), v)
		}
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	require.NoError(t, err)
	payload, err := json.Marshal(claims)
	require.NoError(t, err)
	jws, err := signer.Sign(payload)
	require.NoError(t, err)
	out, err := jws.CompactSerialize()
	require.NoError(t, err)
	return out
}

func TestForgedTokensRejected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.verifier(t, true)
	tok := e.token(t)
	header, claims := parts(t, tok)
	segs := strings.Split(tok, ".")
	foreign, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)

	// HS256 keyed with the issuer's public key (the classic confusion).
	var set jose.JSONWebKeySet
	resp, err := http.Get(e.issuerURL + authserver.JWKSPath)
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&set))
	resp.Body.Close()
	pubDER, err := x509.MarshalPKIXPublicKey(set.Keys[0].Key)
	require.NoError(t, err)

	tampered := func(change func(map[string]any)) string {
		c := map[string]any{}
		for k, v := range claims {
			c[k] = v
		}
		change(c)
		return segs[0] + "." + b64json(t, c) + "." + segs[2]
	}
	noneHeader := map[string]any{"alg": "none", "typ": "at+jwt", "kid": header["kid"]}
	for name, tc := range map[string]struct{ token, reason string }{
		"alg none":              {b64json(t, noneHeader) + "." + segs[1] + ".", "malformed token or disallowed algorithm"},
		"HS256 with public key": {signRaw(t, jose.HS256, pubDER, header, claims), "malformed token or disallowed algorithm"},
		"foreign key, same kid": {signRaw(t, jose.RS256, jose.JSONWebKey{Key: foreign, KeyID: header["kid"].(string)}, map[string]any{"typ": "at+jwt"}, claims), "bad signature"},
		"foreign key, new kid":  {signRaw(t, jose.RS256, jose.JSONWebKey{Key: foreign, KeyID: "forged"}, map[string]any{"typ": "at+jwt"}, claims), "unknown signing key"},
		"tampered account":      {tampered(func(c map[string]any) { c["account"] = store.NewID("acc") }), "bad signature"},
		"tampered client":       {tampered(func(c map[string]any) { c["azp"] = store.NewID("cli") }), "bad signature"},
		"signature stripped":    {segs[0] + "." + segs[1] + ".", "bad signature"},
		"JSON serialization":    {`{"payload":"` + segs[1] + `","protected":"` + segs[0] + `","signature":"` + segs[2] + `"}`, "malformed token or disallowed algorithm"},
		"garbage":               {"not-a-token", "malformed token or disallowed algorithm"},
		"empty":                 {"", "malformed token"},
		"unknown issuer":        {tampered(func(c map[string]any) { c["iss"] = "https://evil.example" }), "unknown issuer"},
	} {
		t.Run(name, func(t *testing.T) {
			reject(t, v, tc.token, tc.reason)
		})
	}
	// The real token still works.
	accept(t, v, tok)
}

func TestWrongAudienceAndIssuer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.verifier(t, true)
	ctx := context.Background()

	// Issuers sharing the same database (and so the same signing key)
	// but configured with another audience or issuer URL.
	other := func(iss, aud string) string {
		s, err := authserver.New(ctx, authserver.Options{Store: e.st.Auth, Issuer: iss, Audience: aud, SecretKey: secretKey, Now: e.clock.Now})
		require.NoError(t, err)
		ts := httptest.NewServer(s)
		defer ts.Close()
		resp, err := http.PostForm(ts.URL+authserver.TokenPath, url.Values{"client_id": {e.client.ClientID},
			"client_secret": {e.secret}, "grant_type": {"client_credentials"}})
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return body["access_token"].(string)
	}
	reject(t, v, other(e.issuerURL, "https://other-api.example"), "wrong audience")
	reject(t, v, other("https://other-issuer.example", audience), "unknown issuer")
}

func TestExpired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.verifier(t, true)
	tok := e.token(t)
	// Keep it in use so only exp can end it.
	for range 12 {
		e.clock.Advance(idle)
		accept(t, v, tok)
	}
	e.clock.Advance(time.Second)
	reject(t, v, tok, "token expired")
}

func TestIdleLifetime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.verifier(t, true)

	// Never used: counted from iat.
	fresh := e.token(t)
	e.clock.Advance(idle)
	accept(t, v, fresh)
	stale := e.token(t)
	e.clock.Advance(idle + flush + time.Millisecond)
	reject(t, v, stale, "token idle for more than 300s")
	reject(t, v, stale, "token idle for more than 300s") // and stays rejected

	// Used: counted from the last use.
	tok := e.token(t)
	for range 5 {
		e.clock.Advance(idle)
		accept(t, v, tok)
	}
	e.clock.Advance(idle + flush + time.Millisecond)
	reject(t, v, tok, "token idle for more than 300s")
}

func TestIdleAcrossReplicas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := e.verifier(t, true), e.verifier(t, true)
	ctx := context.Background()
	tok := e.token(t)

	e.clock.Advance(200 * time.Second)
	accept(t, a, tok)
	require.NoError(t, a.Flush(ctx))
	// 499s after iat, but 299s after its use on A: B reads that use.
	e.clock.Advance(299 * time.Second)
	accept(t, b, tok)
	// B's use is not flushed; idle beyond 300s + flush is rejected on B.
	e.clock.Advance(idle + flush + time.Millisecond)
	reject(t, b, tok, "token idle for more than 300s")

	// A use accepted only within the flush tolerance is written at once,
	// so another replica counts from it right away.
	tok = e.token(t)
	e.clock.Advance(idle + time.Second)
	accept(t, a, tok)
	e.clock.Advance(flush - time.Millisecond)
	accept(t, b, tok)

	// Uses are written by Run's flusher too.
	tok = e.token(t)
	e.clock.Advance(10 * time.Second)
	accept(t, a, tok)
	_, claims := parts(t, tok)
	require.Eventually(t, func() bool {
		last, ok, err := e.st.Auth.TokenLastUse(ctx, claims["jti"].(string))
		return err == nil && ok && last.Equal(e.clock.Now())
	}, 10*time.Second, 10*time.Millisecond)
}

func TestFinalFlushOnShutdown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v, err := auth.New(auth.Options{Store: e.st.Auth, Issuers: []auth.Issuer{{URL: e.issuerURL}}, BuiltInIssuer: e.issuerURL,
		Audience: audience, FlushInterval: 5 * time.Second, Now: e.clock.Now, Logger: e.log})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- v.Run(ctx) }()
	require.Eventually(t, func() bool { return v.Ready() == nil }, 10*time.Second, 5*time.Millisecond)
	tok := e.token(t)
	accept(t, v, tok)
	cancel()
	require.NoError(t, <-done)
	_, claims := parts(t, tok)
	_, ok, err := e.st.Auth.TokenLastUse(context.Background(), claims["jti"].(string))
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestRevokedAndDeleted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.verifier(t, true)
	ctx := context.Background()
	tok := e.token(t)
	accept(t, v, tok)

	_, err := e.st.Auth.RevokeTokens(ctx, e.client.ID)
	require.NoError(t, err)
	e.clock.Advance(flush) // the client cache's lifetime
	reject(t, v, tok, "token revoked")
	// A token fetched after the revocation works, even in the same second.
	fresh := e.token(t)
	accept(t, v, fresh)

	require.NoError(t, e.st.Auth.DeleteClient(ctx, e.client.ID))
	e.clock.Advance(flush)
	reject(t, v, fresh, "unknown client")
}

func TestIssuerDownAtStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(t)
	e.down.Store(true)
	v := e.verifier(t, false)
	p, err := v.Authenticate(context.Background(), tok)
	require.ErrorIs(t, err, auth.ErrUnavailable)
	assert.Zero(t, p)
	require.ErrorIs(t, v.Ready(), auth.ErrUnavailable)

	e.down.Store(false)
	require.Eventually(t, func() bool { return v.Ready() == nil }, 10*time.Second, 5*time.Millisecond)
	accept(t, v, tok)
}

func TestUnknownKidRefetchIsRateLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.verifier(t, true)
	ctx := context.Background()
	require.EqualValues(t, 1, e.jwksHits.Load(), "discovery fetched the keys once")
	tok := e.token(t)
	accept(t, v, tok)
	hdr, claims := parts(t, tok)
	forger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	forge := func(kid string) string {
		return signRaw(t, jose.ES256, jose.JSONWebKey{Key: forger, KeyID: kid}, map[string]any{"typ": "at+jwt"}, claims)
	}

	// The keys were fetched at discovery, a moment ago: no refetch yet.
	for i := range 10 {
		reject(t, v, forge(fmt.Sprint("forged-", i)), "unknown signing key")
	}
	assert.EqualValues(t, 1, e.jwksHits.Load())
	e.clock.Advance(10 * time.Second)
	for i := range 10 {
		reject(t, v, forge(fmt.Sprint("forged-again-", i)), "unknown signing key")
	}
	assert.EqualValues(t, 2, e.jwksHits.Load(), "one refetch for ten unknown kids")
	// A known kid with a bad signature never triggers a refetch.
	e.clock.Advance(10 * time.Second)
	reject(t, v, forge(hdr["kid"].(string)), "bad signature")
	assert.EqualValues(t, 2, e.jwksHits.Load())

	// A key that signs at once — the signing key was retired, so a new
	// one took over without being published first — is fetched once the
	// interval passed.
	require.NoError(t, e.issuer.Retire(ctx, hdr["kid"].(string)))
	rotated := e.token(t)
	accept(t, v, rotated) // fetched: the last fetch was 20s ago
	assert.EqualValues(t, 3, e.jwksHits.Load())
	require.NoError(t, e.issuer.Retire(ctx, e.issuer.CurrentKeyID()))
	rotated = e.token(t)
	reject(t, v, rotated, "unknown signing key") // too soon after the last fetch
	e.clock.Advance(10 * time.Second)
	accept(t, v, rotated)
	assert.EqualValues(t, 4, e.jwksHits.Load())
	reject(t, v, tok, "unknown signing key") // its key was retired
}

// fakeIssuer is an external OIDC provider (ES256) that signs whatever a
// test asks for.
type fakeIssuer struct {
	url string
	key *ecdsa.PrivateKey
}

func newFakeIssuer(t *testing.T) *fakeIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	fi := &fakeIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": fi.url, "jwks_uri": fi.url + "/certs",
			"id_token_signing_alg_values_supported": []string{"ES256"}})
	})
	mux.HandleFunc("/certs", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &key.PublicKey, KeyID: "ext-1", Algorithm: "ES256", Use: "sig"},
			{Key: []byte("symmetric secret"), KeyID: "oct-1", Algorithm: "HS256"}, // must be ignored
		}})
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	fi.url = ts.URL
	return fi
}

func (fi *fakeIssuer) sign(t *testing.T, typ string, claims map[string]any) string {
	header := map[string]any{}
	if typ != "" {
		header["typ"] = typ
	}
	return signRaw(t, jose.ES256, jose.JSONWebKey{Key: fi.key, KeyID: "ext-1"}, header, claims)
}

func TestExternalIssuerTokenTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ext := newFakeIssuer(t)
	linked, err := e.st.Auth.LinkClient(context.Background(), e.client.AccountID, ext.url, "erp", "erp", auth.GroupFull)
	require.NoError(t, err)
	v := e.verifier(t, true, auth.Issuer{URL: ext.url})
	now := e.clock.Now().Unix()
	base := func(extra map[string]any) map[string]any {
		c := map[string]any{"iss": ext.url, "aud": []string{audience, "account"}, "azp": "erp", "sub": "svc-erp",
			"iat": now, "exp": now + 3600, "jti": "j-" + store.NewID("x")}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	for name, tc := range map[string]struct {
		typ    string
		claims map[string]any
		reason string // empty: accepted
	}{
		"RFC 9068 access token":       {typ: "at+jwt", claims: base(nil)},
		"application/at+jwt":          {typ: "application/at+jwt", claims: base(nil)},
		"Keycloak access token":       {typ: "JWT", claims: base(map[string]any{"typ": "Bearer"})},
		"no typ header, Bearer claim": {claims: base(map[string]any{"typ": "Bearer"})},
		"client_id without azp":       {typ: "at+jwt", claims: base(map[string]any{"azp": nil, "client_id": "erp"})},
		"Keycloak ID token":           {typ: "JWT", claims: base(map[string]any{"typ": "ID"}), reason: "not an access token"},
		"Keycloak refresh token":      {typ: "JWT", claims: base(map[string]any{"typ": "Refresh"}), reason: "not an access token"},
		"plain JWT (an ID token)":     {typ: "JWT", claims: base(nil), reason: "not an access token"},
		"no typ at all":               {claims: base(nil), reason: "not an access token"},
		"nonce":                       {typ: "at+jwt", claims: base(map[string]any{"nonce": "n-0S6_WzA2Mj"}), reason: "not an access token"},
		"logout token":                {typ: "logout+jwt", claims: base(nil), reason: "not an access token"},
		"wrong audience":              {typ: "at+jwt", claims: base(map[string]any{"aud": "account"}), reason: "wrong audience"},
		"expired":                     {typ: "at+jwt", claims: base(map[string]any{"exp": now - 1}), reason: "token expired"},
		"no exp":                      {typ: "at+jwt", claims: base(map[string]any{"exp": nil}), reason: "token expired"},
		"no iat":                      {typ: "at+jwt", claims: base(map[string]any{"iat": nil}), reason: "token has no iat"},
		"unlinked client":             {typ: "at+jwt", claims: base(map[string]any{"azp": "stranger"}), reason: "unknown client"},
		"no client":                   {typ: "at+jwt", claims: base(map[string]any{"azp": nil}), reason: "token names no client"},
	} {
		t.Run(name, func(t *testing.T) {
			for k, val := range tc.claims {
				if val == nil {
					delete(tc.claims, k)
				}
			}
			tok := ext.sign(t, tc.typ, tc.claims)
			if tc.reason != "" {
				reject(t, v, tok, tc.reason)
				return
			}
			p := accept(t, v, tok)
			assert.Equal(t, auth.Principal{AccountID: linked.AccountID, ClientID: linked.ID, AccessGroup: auth.GroupFull,
				TokenID: tc.claims["jti"].(string)}, p)
		})
	}

	// An external issuer cannot speak for a built-in client.
	reject(t, v, ext.sign(t, "at+jwt", base(map[string]any{"azp": e.client.ClientID})), "unknown client")
}

func TestDiscoveryURLDiffersFromIssuer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The public issuer URL is unreachable (as from inside a container);
	// discovery and keys come from the reachable address.
	const public = "http://auth.public.example"
	s, err := authserver.New(context.Background(), authserver.Options{Store: e.st.Auth, Issuer: public, Audience: audience,
		SecretKey: secretKey, Now: e.clock.Now})
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	v, err := auth.New(auth.Options{Store: e.st.Auth, Issuers: []auth.Issuer{{URL: public, DiscoveryURL: ts.URL}},
		BuiltInIssuer: public, Audience: audience, Now: e.clock.Now, Logger: e.log})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- v.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool { return v.Ready() == nil }, 10*time.Second, 5*time.Millisecond)

	resp, err := http.PostForm(ts.URL+authserver.TokenPath, url.Values{"client_id": {e.client.ClientID},
		"client_secret": {e.secret}, "grant_type": {"client_credentials"}})
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	accept(t, v, body["access_token"].(string))
}

func TestOptionsChecked(t *testing.T) {
	t.Parallel()
	_, err := auth.New(auth.Options{Store: &authdb.Store{}, Issuers: []auth.Issuer{{URL: "http://x"}}, Audience: audience,
		FlushInterval: 6 * time.Second})
	require.Error(t, err)
	_, err = auth.New(auth.Options{Store: &authdb.Store{}, Audience: audience})
	require.Error(t, err)
}
