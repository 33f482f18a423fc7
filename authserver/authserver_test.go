package authserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/internal/syncbuf"
	"github.com/touchpoint/touchpoint/internal/testclock"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/authdb"
	"github.com/touchpoint/touchpoint/storeset"
)

const (
	secretKey = "test-secret-key-0123456789abcdef0123456789"
	audience  = "http://api.touchpoint.test"
)

type fixture struct {
	st       *store.Store
	clock    *testclock.Clock
	opts     authserver.Options
	srv      *authserver.Server
	url      string
	client   authdb.Client
	secret   string
	external authdb.Client
}

// newFixture starts an issuer on a fresh database with one built-in and
// one linked external client; configure may change its options.
func newFixture(t *testing.T, configure ...func(*authserver.Options)) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{st: storeset.New(testdb.New(t), "P7D"), clock: testclock.New(time.Date(2026, 3, 1, 10, 0, 0, 250e6, time.UTC))}
	f.st.SetClock(f.clock.Now)
	acc, _, err := f.st.Accounts.CreateAccount(ctx, "Acme")
	require.NoError(t, err)
	var hash []byte
	f.secret, hash = authserver.NewClientSecret(secretkey.Derive(secretKey, secretkey.ClientSecret))
	f.client, err = f.st.Auth.CreateClient(ctx, acc.ID, "shop", auth.GroupEvents, hash)
	require.NoError(t, err)
	f.external, err = f.st.Auth.LinkClient(ctx, acc.ID, "https://idp.example", "ext-client", "ext", auth.GroupFull)
	require.NoError(t, err)

	ts := httptest.NewUnstartedServer(nil)
	f.url = "http://" + ts.Listener.Addr().String()
	f.opts = authserver.Options{Store: f.st.Auth, Issuer: f.url, Audience: audience, SecretKey: secretKey,
		Now: f.clock.Now, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
	for _, c := range configure {
		c(&f.opts)
	}
	f.srv, err = authserver.New(ctx, f.opts)
	require.NoError(t, err)
	ts.Config.Handler = f.srv
	ts.Start()
	t.Cleanup(ts.Close)
	return f
}

func (f *fixture) form() url.Values {
	return url.Values{"client_id": {f.client.ClientID}, "client_secret": {f.secret},
		"grant_type": {"client_credentials"}, "audience": {audience}}
}

// post sends a token request; mod may change it before it is sent.
func (f *fixture) post(t *testing.T, body string, mod func(*http.Request)) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.url+authserver.TokenPath, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if mod != nil {
		mod(req)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var body map[string]any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &body), "body %s", raw)
	}
	return resp, body
}

func (f *fixture) token(t *testing.T) string {
	t.Helper()
	resp, body := f.post(t, f.form().Encode(), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	return body["access_token"].(string)
}

func (f *fixture) jwks(t *testing.T) jose.JSONWebKeySet {
	t.Helper()
	resp, err := http.Get(f.url + authserver.JWKSPath)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var set jose.JSONWebKeySet
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&set))
	return set
}

// verify checks a token's signature against the published keys and
// returns its header and claims.
func verify(t *testing.T, set jose.JSONWebKeySet, tok string) (jose.Header, map[string]any) {
	t.Helper()
	jws, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.RS256})
	require.NoError(t, err)
	hdr := jws.Signatures[0].Header
	keys := set.Key(hdr.KeyID)
	require.Len(t, keys, 1, "kid %s published", hdr.KeyID)
	payload, err := jws.Verify(keys[0])
	require.NoError(t, err)
	var claims map[string]any
	require.NoError(t, json.Unmarshal(payload, &claims))
	return hdr, claims
}

func assertNoStore(t *testing.T, resp *http.Response) {
	t.Helper()
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	assert.Equal(t, "no-cache", resp.Header.Get("Pragma"))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
}

func TestTokenSuccess(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	basic := func(id, secret string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret)) }
	}
	noCreds := url.Values{"grant_type": {"client_credentials"}, "audience": {audience}}
	slash := f.form()
	slash.Set("audience", audience+"/")
	for name, tc := range map[string]struct {
		body string
		mod  func(*http.Request)
	}{
		"post":                      {f.form().Encode(), nil},
		"basic":                     {noCreds.Encode(), basic(f.client.ClientID, f.secret)},
		"basic and same form id":    {f.form().Encode(), basic(f.client.ClientID, f.secret)},
		"no audience means the API": {url.Values{"client_id": {f.client.ClientID}, "client_secret": {f.secret}, "grant_type": {"client_credentials"}}.Encode(), nil},
		"audience with a slash":     {slash.Encode(), nil},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := f.post(t, tc.body, tc.mod)
			require.Equal(t, http.StatusOK, resp.StatusCode, body)
			assertNoStore(t, resp)
			tok, _ := body["access_token"].(string)
			require.NotEmpty(t, tok)
			delete(body, "access_token")
			assert.Equal(t, map[string]any{"expires_in": 300.0, "refresh_expires_in": 0.0, "token_type": "bearer",
				"not-before-policy": 0.0, "scope": "profile email"}, body)

			hdr, claims := verify(t, f.jwks(t), tok)
			assert.Equal(t, "at+jwt", hdr.ExtraHeaders["typ"])
			assert.Equal(t, "RS256", hdr.Algorithm)
			assert.Equal(t, f.srv.CurrentKeyID(), hdr.KeyID)
			iat := f.clock.Now().Unix()
			assert.NotEmpty(t, claims["jti"])
			delete(claims, "jti")
			assert.Equal(t, map[string]any{
				"iss": f.url, "sub": f.client.ClientID, "azp": f.client.ClientID, "client_id": f.client.ClientID,
				"aud": audience, "iat": float64(iat), "exp": float64(iat + 3600), "scope": "profile email",
				"account": f.client.AccountID, "group": auth.GroupEvents,
			}, claims)
		})
	}
}

func TestTokenBasicIsFormDecoded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const secret = "p@ss:wörd+/= %"
	c, err := f.st.Auth.CreateClient(context.Background(), f.client.AccountID, "odd", auth.GroupFull,
		authserver.HashClientSecret(secretkey.Derive(secretKey, secretkey.ClientSecret), secret))
	require.NoError(t, err)
	resp, body := f.post(t, "grant_type=client_credentials", func(r *http.Request) {
		r.SetBasicAuth(url.QueryEscape(c.ClientID), url.QueryEscape(secret))
	})
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
}

func TestTokenUniqueIDs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	set := f.jwks(t)
	_, a := verify(t, set, f.token(t))
	_, b := verify(t, set, f.token(t))
	assert.NotEqual(t, a["jti"], b["jti"])
}

func TestTokenAfterRevocation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	nb, err := f.st.Auth.RevokeTokens(context.Background(), f.client.ID)
	require.NoError(t, err)
	require.True(t, nb.After(f.clock.Now()), "rounded up to the next second")

	// Fetched in the same second as the revocation: iat is the not-before,
	// so the new token is not born revoked.
	resp, body := f.post(t, f.form().Encode(), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, float64(nb.Unix()), body["not-before-policy"])
	_, claims := verify(t, f.jwks(t), body["access_token"].(string))
	assert.Equal(t, float64(nb.Unix()), claims["iat"])
	assert.Equal(t, float64(nb.Unix()+3600), claims["exp"])

	f.clock.Advance(2 * time.Second)
	_, claims = verify(t, f.jwks(t), f.token(t))
	assert.Equal(t, float64(f.clock.Now().Unix()), claims["iat"])
}

func TestTokenErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	without := func(name string) string {
		v := f.form()
		v.Del(name)
		return v.Encode()
	}
	with := func(name, value string) string {
		v := f.form()
		v.Set(name, value)
		return v.Encode()
	}
	basic := func(id, secret string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(id, secret) }
	}
	noCreds := url.Values{"grant_type": {"client_credentials"}}.Encode()
	for name, tc := range map[string]struct {
		method, body string
		mod          func(*http.Request)
		status       int
		code         string
		challenge    bool
	}{
		"missing grant_type":        {body: without("grant_type"), status: 400, code: "invalid_request"},
		"missing client_id":         {body: without("client_id"), status: 400, code: "invalid_request"},
		"missing client_secret":     {body: without("client_secret"), status: 400, code: "invalid_request"},
		"empty body":                {body: "", status: 400, code: "invalid_request"},
		"password grant":            {body: with("grant_type", "password"), status: 400, code: "unsupported_grant_type"},
		"wrong audience":            {body: with("audience", "https://elsewhere.example"), status: 400, code: "invalid_target"},
		"unknown client":            {body: with("client_id", store.NewID("cli")), status: 401, code: "invalid_client"},
		"not a client id":           {body: with("client_id", "nobody"), status: 401, code: "invalid_client"},
		"wrong secret":              {body: with("client_secret", "wrong"), status: 401, code: "invalid_client"},
		"wrong secret, basic":       {body: noCreds, mod: basic(f.client.ClientID, "wrong"), status: 401, code: "invalid_client", challenge: true},
		"malformed basic":           {body: noCreds, mod: func(r *http.Request) { r.Header.Set("Authorization", "Basic !!!") }, status: 401, code: "invalid_client", challenge: true},
		"external client":           {body: with("client_id", f.external.ClientID), status: 401, code: "invalid_client"},
		"basic and form differ":     {body: f.form().Encode(), mod: basic(f.client.ClientID, "other"), status: 400, code: "invalid_request"},
		"basic and form ids differ": {body: f.form().Encode(), mod: basic(store.NewID("cli"), f.secret), status: 400, code: "invalid_request"},
		"GET":                       {method: http.MethodGet, status: 405, code: "invalid_request"},
		"JSON":                      {body: `{"grant_type":"client_credentials"}`, mod: func(r *http.Request) { r.Header.Set("Content-Type", "application/json") }, status: 400, code: "invalid_request"},
		"no content type":           {body: f.form().Encode(), mod: func(r *http.Request) { r.Header.Del("Content-Type") }, status: 400, code: "invalid_request"},
		"duplicated parameter":      {body: f.form().Encode() + "&grant_type=client_credentials", status: 400, code: "invalid_request"},
		"duplicated secret":         {body: f.form().Encode() + "&client_secret=" + url.QueryEscape(f.secret), status: 400, code: "invalid_request"},
		"oversized body":            {body: f.form().Encode() + "&pad=" + strings.Repeat("x", 9<<10), status: 413, code: "invalid_request"},
		"parameters in the URL":     {body: f.form().Encode(), mod: func(r *http.Request) { r.URL.RawQuery = "client_secret=x" }, status: 400, code: "invalid_request"},
		"malformed form":            {body: "grant_type=%zz", status: 400, code: "invalid_request"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			req, err := http.NewRequest(method, f.url+authserver.TokenPath, strings.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.mod != nil {
				tc.mod(req)
			}
			resp, body := do(t, req)
			assert.Equal(t, tc.status, resp.StatusCode, body)
			assert.Equal(t, tc.code, body["error"])
			assert.NotEmpty(t, body["error_description"])
			assert.Len(t, body, 2)
			assertNoStore(t, resp)
			if tc.challenge {
				assert.Equal(t, `Basic realm="touchpoint"`, resp.Header.Get("WWW-Authenticate"))
			} else {
				assert.Empty(t, resp.Header.Get("WWW-Authenticate"))
			}
			if tc.status == 405 {
				assert.Equal(t, "POST", resp.Header.Get("Allow"))
			}
		})
	}
}

func TestTokenFailureRateLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	wrong := f.form()
	wrong.Set("client_secret", "wrong")
	for range 10 {
		resp, body := f.post(t, wrong.Encode(), nil)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
	}
	// This client's bucket at this address is empty: even the right
	// secret waits, here.
	resp, body := f.post(t, f.form().Encode(), nil)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, body)
	assert.Equal(t, "slow_down", body["error"])
	assert.Equal(t, "6", resp.Header.Get("Retry-After"))
	assertNoStore(t, resp)

	f.clock.Advance(6 * time.Second)
	resp, body = f.post(t, f.form().Encode(), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)

	// Per address: failures spread over many client ids.
	// 30 minus the 10 failures above plus 3 refilled in those 6 seconds.
	for range 23 {
		other := f.form()
		other.Set("client_id", store.NewID("cli"))
		resp, body := f.post(t, other.Encode(), nil)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
	}
	other := f.form()
	other.Set("client_id", store.NewID("cli"))
	resp, body = f.post(t, other.Encode(), nil)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, body)
	assert.Equal(t, "slow_down", body["error"])
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
}

// from makes a request come from addr, as a trusted proxy in front of
// the issuer reports it.
func from(addr string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("X-Forwarded-For", addr) }
}

func TestKnowingAClientIDDoesNotLockItsOwnerOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *authserver.Options) { o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} })
	wrong := f.form()
	wrong.Set("client_secret", "wrong")
	const attacker, owner = "198.51.100.66", "203.0.113.10"
	for range 10 {
		resp, body := f.post(t, wrong.Encode(), from(attacker))
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
	}
	resp, body := f.post(t, f.form().Encode(), from(attacker))
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, body, "the guesser's address waits")

	// The owner, at another address, is not held back by the guesser.
	resp, body = f.post(t, f.form().Encode(), from(owner))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	// Nor is another host of the attacker's neighbourhood, but the rest of
	// an IPv6 /64 counts as the same address.
	for range 10 {
		resp, body := f.post(t, wrong.Encode(), from("2001:db8:1:2::1"))
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
	}
	resp, body = f.post(t, f.form().Encode(), from("2001:db8:1:2::ffff"))
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, body, "same /64")
	resp, body = f.post(t, f.form().Encode(), from("2001:db8:1:3::1"))
	require.Equal(t, http.StatusOK, resp.StatusCode, body, "another /64")
}

func TestForwardedForIsIgnoredFromUntrustedPeers(t *testing.T) {
	t.Parallel()
	f := newFixture(t) // no trusted proxies
	wrong := f.form()
	wrong.Set("client_secret", "wrong")
	// A guesser cannot pick a fresh address per attempt with the header:
	// every attempt counts against the peer address.
	for i := range 10 {
		resp, body := f.post(t, wrong.Encode(), from(fmt.Sprintf("198.51.100.%d", i)))
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
	}
	resp, body := f.post(t, wrong.Encode(), from("198.51.100.200"))
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, body)
}

func TestMalformedClientIDsAreNotKeptOrLogged(t *testing.T) {
	t.Parallel()
	var logs syncbuf.Buffer
	f := newFixture(t, func(o *authserver.Options) {
		o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	wrong := f.form()
	wrong.Set("client_secret", "wrong")
	resp, body := f.post(t, wrong.Encode(), from("203.0.113.1"))
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)

	const marker = "forged-log-line"
	for i := range 40 {
		junk := f.form()
		junk.Set("client_id", fmt.Sprintf("x%d\n{\"level\":\"ERROR\",\"msg\":\"%s\"}", i, marker))
		resp, body := f.post(t, junk.Encode(), from(fmt.Sprintf("198.51.100.%d", i)))
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
		assert.Equal(t, "invalid_client", body["error"])
	}
	pairs, addrs := authserver.LimiterSizes(f.srv)
	assert.Equal(t, 1, pairs, "only the well-formed client id became a key")
	assert.Equal(t, 41, addrs, "each address still counts its failures")
	assert.NotContains(t, logs.String(), marker, "a malformed client id is never logged")
	assert.Contains(t, logs.String(), f.client.ClientID, "a well-formed one is")
}

func TestDiscoveryAndJWKS(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	resp, doc := do(t, mustRequest(t, http.MethodGet, f.url+authserver.DiscoveryPath))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "public, max-age=60", resp.Header.Get("Cache-Control"))
	assert.Equal(t, f.url, doc["issuer"])
	assert.Equal(t, f.url+"/oauth/token", doc["token_endpoint"])
	assert.Equal(t, f.url+"/.well-known/jwks.json", doc["jwks_uri"])
	assert.Equal(t, []any{"client_credentials"}, doc["grant_types_supported"])
	assert.Equal(t, []any{"client_secret_post", "client_secret_basic"}, doc["token_endpoint_auth_methods_supported"])
	assert.Equal(t, []any{"RS256"}, doc["id_token_signing_alg_values_supported"])
	assert.NotEmpty(t, doc["response_types_supported"])
	assert.NotEmpty(t, doc["subject_types_supported"])

	// go-oidc accepts the document.
	p, err := oidc.NewProvider(context.Background(), f.url)
	require.NoError(t, err)
	assert.Equal(t, f.url+"/oauth/token", p.Endpoint().TokenURL)

	resp, err = http.Get(f.url + authserver.JWKSPath)
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "public, max-age=60", resp.Header.Get("Cache-Control"))
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	require.NoError(t, json.Unmarshal(raw, &set))
	require.Len(t, set.Keys, 1)
	k := set.Keys[0]
	assert.Equal(t, f.srv.CurrentKeyID(), k["kid"])
	assert.Equal(t, "RSA", k["kty"])
	assert.Equal(t, "RS256", k["alg"])
	assert.Equal(t, "sig", k["use"])
	for _, private := range []string{"d", "p", "q", "dp", "dq", "qi"} {
		assert.NotContains(t, k, private)
	}

	resp, err = http.Post(f.url+authserver.JWKSPath, "text/plain", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func mustRequest(t *testing.T, method, u string) *http.Request {
	req, err := http.NewRequest(method, u, nil)
	require.NoError(t, err)
	return req
}

func TestKeysSurviveRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok := f.token(t)
	again, err := authserver.New(context.Background(), f.opts)
	require.NoError(t, err)
	assert.Equal(t, f.srv.CurrentKeyID(), again.CurrentKeyID())
	verify(t, f.jwks(t), tok)

	// The private key is stored sealed, not in the clear.
	keys, err := f.st.Auth.SigningKeys(context.Background())
	require.NoError(t, err)
	require.Len(t, keys, 1)
	assert.NotContains(t, string(keys[0].PrivateKey), "PRIVATE")
}

func TestConcurrentStartsShareOneKey(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "P7D")
	opts := authserver.Options{Store: st.Auth, Issuer: "http://auth.test", Audience: audience, SecretKey: secretKey}
	var wg sync.WaitGroup
	kids := make([]string, 4)
	for i := range kids {
		wg.Go(func() {
			s, err := authserver.New(context.Background(), opts)
			if assert.NoError(t, err) {
				kids[i] = s.CurrentKeyID()
			}
		})
	}
	wg.Wait()
	keys, err := st.Auth.SigningKeys(context.Background())
	require.NoError(t, err)
	require.Len(t, keys, 1)
	for _, kid := range kids {
		assert.Equal(t, keys[0].KID, kid)
	}
}

// lead is how long a new key is published before it signs with the
// default options: one JWKS refresh (5m), one reload (30s) and the
// JWKS's max-age (1m).
const lead = 5*time.Minute + 30*time.Second + time.Minute

func TestRotatePublishesBeforeSigning(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	oldKID := f.srv.CurrentKeyID()
	old := f.token(t)
	// A replica that will not reload before the rotation.
	stale, err := authserver.New(ctx, f.opts)
	require.NoError(t, err)

	info, err := f.srv.Rotate(ctx)
	require.NoError(t, err)
	assert.Equal(t, authserver.KeyPending, info.State)
	assert.True(t, info.Usable)
	assert.Equal(t, info.CreatedAt.Add(lead), info.ActiveFrom)

	// Published at once, but the old key still signs: a verifier that
	// has not refetched the key set yet still knows every new token's kid.
	set := f.jwks(t)
	assert.Len(t, set.Keys, 2)
	assert.Len(t, set.Key(info.KID), 1)
	assert.Equal(t, oldKID, f.srv.CurrentKeyID())
	hdr, _ := verify(t, set, f.token(t))
	assert.Equal(t, oldKID, hdr.KeyID)
	f.clock.Advance(info.ActiveFrom.Sub(f.clock.Now()) - time.Millisecond)
	hdr, _ = verify(t, set, f.token(t))
	assert.Equal(t, oldKID, hdr.KeyID)

	// One lead after its creation the new key signs.
	f.clock.Advance(time.Millisecond)
	assert.Equal(t, info.KID, f.srv.CurrentKeyID())
	hdr, _ = verify(t, set, f.token(t))
	assert.Equal(t, info.KID, hdr.KeyID)
	hdr, _ = verify(t, f.jwks(t), old)
	assert.Equal(t, oldKID, hdr.KeyID, "tokens of the old key still verify")

	// The stale replica still signs with the old key, which this one
	// keeps publishing.
	assert.Equal(t, oldKID, stale.CurrentKeyID())
	ts := httptest.NewServer(stale)
	defer ts.Close()
	resp, body := do(t, func() *http.Request {
		req, err := http.NewRequest(http.MethodPost, ts.URL+authserver.TokenPath, strings.NewReader(f.form().Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return req
	}())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	hdr, _ = verify(t, f.jwks(t), body["access_token"].(string))
	assert.Equal(t, oldKID, hdr.KeyID)

	// Once no token of the old key can be valid any more (lifetime plus
	// two reload intervals plus a minute after the takeover), it is no
	// longer published.
	f.clock.Advance(time.Hour + 2*30*time.Second + time.Minute + time.Second)
	keys, err := f.srv.Keys(ctx) // reloads, as Run does
	require.NoError(t, err)
	require.Len(t, keys, 2)
	assert.Equal(t, []authserver.KeyState{authserver.KeySigning, authserver.KeyExpired}, []authserver.KeyState{keys[0].State, keys[1].State})
	set = f.jwks(t)
	require.Len(t, set.Keys, 1)
	assert.Equal(t, f.srv.CurrentKeyID(), set.Keys[0].KeyID)
}

func TestRotationByAge(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	opts := f.opts
	opts.KeyRotation = 24 * time.Hour
	opts.ReloadInterval = 10 * time.Millisecond
	s, err := authserver.New(context.Background(), opts)
	require.NoError(t, err)
	first := s.CurrentKeyID()
	require.Equal(t, f.srv.CurrentKeyID(), first)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

	f.clock.Advance(25 * time.Hour)
	require.Eventually(t, func() bool {
		keys, err := f.st.Auth.SigningKeys(ctx)
		return err == nil && len(keys) == 2
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, first, s.CurrentKeyID(), "the new key is published first")
	f.clock.Advance(5*time.Minute + 10*time.Millisecond + time.Minute)
	// The store has the new key; the server signs with it once a reload
	// has brought it into memory.
	assert.Eventually(t, func() bool { return s.CurrentKeyID() != first }, 10*time.Second, 10*time.Millisecond,
		"the new key signs once published long enough")
	keys, err := s.Keys(ctx)
	require.NoError(t, err)
	require.Len(t, keys, 2, "one new key, however many ticks ran")
	assert.Equal(t, authserver.KeySigning, keys[0].State)
	assert.Equal(t, authserver.KeyPublished, keys[1].State, "the old key is still published")
}

func TestRetire(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	k1 := f.srv.CurrentKeyID()
	tok1 := f.token(t)
	k2, err := f.srv.Rotate(ctx)
	require.NoError(t, err)

	// Retiring the signing key (a compromise) makes the pending key sign
	// at once, and the retired one is published no more.
	require.NoError(t, f.srv.Retire(ctx, k1))
	assert.Equal(t, k2.KID, f.srv.CurrentKeyID())
	set := f.jwks(t)
	assert.Empty(t, set.Key(k1))
	assert.Len(t, set.Key(k2.KID), 1)
	jws, err := jose.ParseSignedCompact(tok1, []jose.SignatureAlgorithm{jose.RS256})
	require.NoError(t, err)
	assert.Equal(t, k1, jws.Signatures[0].Header.KeyID)
	hdr, _ := verify(t, set, f.token(t))
	assert.Equal(t, k2.KID, hdr.KeyID)
	require.NoError(t, f.srv.Retire(ctx, k1), "retiring twice is harmless")

	// With no pending key, retiring the signing key makes a new one that
	// signs at once.
	require.NoError(t, f.srv.Retire(ctx, k2.KID))
	k3 := f.srv.CurrentKeyID()
	assert.NotContains(t, []string{k1, k2.KID}, k3)
	set = f.jwks(t)
	require.Len(t, set.Keys, 1)
	assert.Equal(t, k3, set.Keys[0].KeyID)

	keys, err := f.srv.Keys(ctx)
	require.NoError(t, err)
	states := map[string]authserver.KeyState{}
	for _, k := range keys {
		states[k.KID] = k.State
		if k.State == authserver.KeyRetired {
			assert.NotNil(t, k.RetiredAt)
		}
	}
	assert.Equal(t, map[string]authserver.KeyState{k1: authserver.KeyRetired, k2.KID: authserver.KeyRetired, k3: authserver.KeySigning}, states)

	// A restart neither publishes nor signs with a retired key.
	again, err := authserver.New(ctx, f.opts)
	require.NoError(t, err)
	assert.Equal(t, k3, again.CurrentKeyID())

	err = f.srv.Retire(ctx, "no-such-kid")
	assert.ErrorIs(t, err, store.ErrNotFound)

	// Retiring a key that does not sign changes nothing else.
	k4, err := f.srv.Rotate(ctx)
	require.NoError(t, err)
	require.NoError(t, f.srv.Retire(ctx, k4.KID))
	assert.Equal(t, k3, f.srv.CurrentKeyID())
	set = f.jwks(t)
	assert.Empty(t, set.Key(k4.KID))
}

func TestJWKSIsServedFromMemory(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	want := f.jwks(t)

	// Hold the signing-key table locked: a JWKS request that queried it
	// would hang behind the lock.
	tx, err := f.st.DB().BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `LOCK TABLE signing_keys IN ACCESS EXCLUSIVE MODE`)
	require.NoError(t, err)
	client := &http.Client{Timeout: 3 * time.Second}
	for range 20 {
		resp, err := client.Get(f.url + authserver.JWKSPath)
		require.NoError(t, err, "the JWKS waited for the database")
		var got jose.JSONWebKeySet
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
		resp.Body.Close()
		assert.Equal(t, len(want.Keys), len(got.Keys))
	}
}

func TestChangedSecretKeyGetsANewKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	opts := f.opts
	opts.SecretKey = secretKey + "-rotated"
	s, err := authserver.New(context.Background(), opts)
	require.NoError(t, err)
	assert.NotEqual(t, f.srv.CurrentKeyID(), s.CurrentKeyID(), "the old key cannot be unsealed, so a new one signs")
	_, err = f.srv.Keys(context.Background()) // a reload, as Run does
	require.NoError(t, err)
	assert.Len(t, f.jwks(t).Keys, 2)
}

func TestNewClientSecret(t *testing.T) {
	t.Parallel()
	key := secretkey.Derive(secretKey, secretkey.ClientSecret)
	a, hashA := authserver.NewClientSecret(key)
	b, _ := authserver.NewClientSecret(key)
	assert.NotEqual(t, a, b)
	raw, err := base64.RawURLEncoding.DecodeString(a)
	require.NoError(t, err)
	assert.Len(t, raw, 32)
	assert.Equal(t, hashA, authserver.HashClientSecret(key, a))
	assert.NotEqual(t, hashA, authserver.HashClientSecret(secretkey.Derive("other", secretkey.ClientSecret), a))
}
