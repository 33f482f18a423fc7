package auth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/coreos/go-oidc/v3/oidc/oidctest"
	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/store"
)

// extIssuer is an independent OIDC provider: go-oidc's oidctest server
// (discovery and JWKS) with its own RSA key, whose tokens a test signs.
type extIssuer struct {
	url  string // the iss of its tokens
	addr string // where it is reachable
	kid  string
	key  *rsa.PrivateKey
}

// newExtIssuer starts a provider whose issuer is its own address, or
// public when that is given (reachable only through a discovery URL).
func newExtIssuer(t *testing.T, kid, public string) *extIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	s := &oidctest.Server{PublicKeys: []oidctest.PublicKey{{PublicKey: key.Public(), KeyID: kid, Algorithm: oidc.RS256}}}
	ts := httptest.NewUnstartedServer(s)
	x := &extIssuer{url: public, addr: "http://" + ts.Listener.Addr().String(), kid: kid, key: key}
	if x.url == "" {
		x.url = x.addr
	}
	s.SetIssuer(x.url)
	ts.Start()
	t.Cleanup(ts.Close)
	return x
}

func (x *extIssuer) sign(t *testing.T, typ string, claims map[string]any) string {
	t.Helper()
	header := map[string]any{}
	if typ != "" {
		header["typ"] = typ
	}
	return signRaw(t, jose.RS256, jose.JSONWebKey{Key: x.key, KeyID: x.kid}, header, claims)
}

// startVerifier runs a Verifier until the test ends and waits until it
// has discovered every issuer.
func startVerifier(t *testing.T, opts auth.Options) *auth.Verifier {
	t.Helper()
	v, err := auth.New(opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- v.Run(ctx) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })
	require.Eventually(t, func() bool { return v.Ready() == nil }, 10*time.Second, 5*time.Millisecond)
	return v
}

// TestExternalIssuersAlongsideBuiltIn configures, as an operator would
// through TOUCHPOINT_OIDC_ISSUER, the built-in issuer, a Keycloak-like
// provider with its own audience, and an Auth0-like one whose iss ends
// in a slash and which is reachable only at another address.
func TestExternalIssuersAlongsideBuiltIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	kc := newExtIssuer(t, "kc-rsa-1", "")
	a0 := newExtIssuer(t, "a0-rsa-1", "https://tenant.auth0.example/")
	const kcAudience = "touchpoint-api"

	// As verifierOptions in cmd/touchpoint reads TOUCHPOINT_OIDC_ISSUER
	// "<built-in>, <kc>|audience=touchpoint-api|maxLifetime=24h,
	// <a0>|discovery=<a0 addr>|maxLifetime=24h" (both issue day-long
	// tokens, as Auth0 does by default).
	opts := auth.Options{Store: e.st.Auth, BuiltInIssuer: e.issuerURL, Audience: audience, Logger: e.log, Issuers: []auth.Issuer{
		{URL: e.issuerURL},
		{URL: kc.url, Audience: kcAudience, MaxLifetime: 24 * time.Hour},
		{URL: a0.url, DiscoveryURL: a0.addr, MaxLifetime: 24 * time.Hour},
	}}
	opts.Now, opts.DiscoveryRetry = e.clock.Now, 10*time.Millisecond
	v := startVerifier(t, opts)

	// "erp" is linked under both providers, to different accounts;
	// "billing" only under the Auth0-like one.
	shopB, _, err := e.st.Accounts.CreateAccount(ctx, "Shop B")
	require.NoError(t, err)
	kcERP, err := e.st.Auth.LinkClient(ctx, shopB.ID, kc.url, "erp", "erp (Keycloak)", auth.GroupReadonly)
	require.NoError(t, err)
	a0ERP, err := e.st.Auth.LinkClient(ctx, e.client.AccountID, a0.url, "erp", "erp (Auth0)", auth.GroupFull)
	require.NoError(t, err)
	_, err = e.st.Auth.LinkClient(ctx, e.client.AccountID, a0.url, "billing", "billing", auth.GroupEvents)
	require.NoError(t, err)

	// Token shapes, as the providers issue them for client credentials.
	claims := func(iss string, extra map[string]any) map[string]any {
		now := e.clock.Now().Unix()
		return mergeClaims(map[string]any{"iss": iss, "sub": "svc-erp", "iat": now, "exp": now + 86400, "jti": store.NewID("jti")}, extra)
	}
	keycloak := func(extra map[string]any) string {
		c := claims(kc.url, map[string]any{"typ": "Bearer", "azp": "erp", "aud": []string{"account", kcAudience},
			"scope": "profile email", "preferred_username": "service-account-erp"})
		return kc.sign(t, "JWT", mergeClaims(c, extra))
	}
	hydra := func(extra map[string]any) string {
		c := claims(kc.url, map[string]any{"client_id": "erp", "aud": []string{kcAudience}, "scp": []string{"events"},
			"nbf": e.clock.Now().Unix(), "ext": map[string]any{}})
		return kc.sign(t, "JWT", mergeClaims(c, extra))
	}
	rfc9068 := func(x *extIssuer, aud string, extra map[string]any) string {
		c := claims(x.url, map[string]any{"client_id": "erp", "aud": aud, "scope": "events"})
		return x.sign(t, "at+jwt", mergeClaims(c, extra))
	}
	kcPrincipal := func(tok string) auth.Principal {
		_, c := parts(t, tok)
		return auth.Principal{AccountID: shopB.ID, ClientID: kcERP.ID, AccessGroup: auth.GroupReadonly, TokenID: c["jti"].(string)}
	}

	t.Run("accepted and mapped to the linked client", func(t *testing.T) {
		for name, tok := range map[string]string{
			"Keycloak": keycloak(nil), "Hydra": hydra(nil), "RFC 9068": rfc9068(kc, kcAudience, nil),
			"iat 60s ahead (clock skew)":      keycloak(map[string]any{"iat": e.clock.Now().Unix() + 60}),
			"Keycloak with aud a string":      keycloak(map[string]any{"aud": kcAudience}),
			"Keycloak 26 (azp and client_id)": keycloak(map[string]any{"client_id": "erp"}),
		} {
			assert.Equal(t, kcPrincipal(tok), accept(t, v, tok), name)
		}
		tok := rfc9068(a0, audience, nil)
		_, c := parts(t, tok)
		assert.Equal(t, auth.Principal{AccountID: e.client.AccountID, ClientID: a0ERP.ID, AccessGroup: auth.GroupFull,
			TokenID: c["jti"].(string)}, accept(t, v, tok), "the same client id under the other issuer: its own link")

		p := accept(t, v, e.token(t))
		assert.Equal(t, e.client.ID, p.ClientID, "the built-in issuer's tokens work alongside")
	})

	t.Run("rejected", func(t *testing.T) {
		for name, tc := range map[string]struct{ token, reason string }{
			"client not linked":                  {rfc9068(kc, kcAudience, map[string]any{"client_id": "stranger"}), "unknown client"},
			"client linked under another issuer": {keycloak(map[string]any{"azp": "billing"}), "unknown client"},
			"built-in client id":                 {hydra(map[string]any{"client_id": e.client.ClientID}), "unknown client"},
			"Keycloak ID token": {keycloak(map[string]any{"typ": "ID", "aud": kcAudience, "nonce": "n-0S6_WzA2Mj",
				"auth_time": e.clock.Now().Unix()}), "not an access token"},
			"Keycloak ID token without nonce": {keycloak(map[string]any{"typ": "ID"}), "not an access token"},
			"Hydra ID token": {hydra(map[string]any{"client_id": nil, "scp": nil, "ext": nil, "at_hash": "Zm9v",
				"auth_time": e.clock.Now().Unix(), "rat": e.clock.Now().Unix(), "sid": "s-1"}), "not an access token"},
			"ID token naming client_id, with auth_time":       {hydra(map[string]any{"auth_time": e.clock.Now().Unix()}), "not an access token"},
			"ID token naming client_id, with at_hash":         {hydra(map[string]any{"at_hash": "Zm9v"}), "not an access token"},
			"plain JWT naming its client in azp only":         {hydra(map[string]any{"client_id": nil, "azp": "erp"}), "not an access token"},
			"the base URL as audience of the Keycloak issuer": {rfc9068(kc, audience, nil), "wrong audience"},
			"Keycloak's account audience only":                {keycloak(map[string]any{"aud": "account"}), "wrong audience"},
			"the Keycloak audience at the other issuer":       {rfc9068(a0, kcAudience, nil), "wrong audience"},
			"azp and client_id differ":                        {keycloak(map[string]any{"client_id": "billing"}), "azp and client_id name different clients"},
			"signed with the other issuer's key": {a0.sign(t, "at+jwt", claims(kc.url, map[string]any{"client_id": "erp", "aud": kcAudience})),
				"unknown signing key"},
			"iss without the slash": {a0.sign(t, "at+jwt", claims("https://tenant.auth0.example", map[string]any{"client_id": "erp", "aud": audience})),
				"unknown issuer"},
			"lifetime above the issuer's maximum": {keycloak(map[string]any{"exp": e.clock.Now().Unix() + 86401}),
				"token lifetime exceeds the maximum"},
			"issued more than 60s in the future": {keycloak(map[string]any{"iat": e.clock.Now().Unix() + 61}),
				"token issued in the future"},
			"client id with a line break": {keycloak(map[string]any{"azp": "erp\nlevel=ERROR"}), "malformed client id"},
			"client id of 256 bytes":      {rfc9068(kc, kcAudience, map[string]any{"client_id": strings.Repeat("x", 256)}), "malformed client id"},
		} {
			t.Run(name, func(t *testing.T) { reject(t, v, tc.token, tc.reason) })
		}
	})

	t.Run("idle rule and exp", func(t *testing.T) {
		used, never := rfc9068(kc, kcAudience, nil), keycloak(nil) // exp a day away
		accept(t, v, used)
		for range 3 {
			e.clock.Advance(idle)
			accept(t, v, used)
		}
		reject(t, v, never, "token idle for more than 300s") // never used, 900s after iat
		e.clock.Advance(idle + flush + time.Millisecond)
		reject(t, v, used, "token idle for more than 300s")

		fresh := hydra(map[string]any{"exp": e.clock.Now().Unix() + 200})
		e.clock.Advance(150 * time.Second)
		accept(t, v, fresh)
		e.clock.Advance(60 * time.Second)
		reject(t, v, fresh, "token expired") // used 60s ago, but its own exp holds
	})

	t.Run("revoked by not-before", func(t *testing.T) {
		old, other := keycloak(nil), rfc9068(a0, audience, nil)
		accept(t, v, old)
		_, err := e.st.Auth.RevokeTokens(ctx, kcERP.ID)
		require.NoError(t, err)
		e.clock.Advance(flush) // the client cache's lifetime
		reject(t, v, old, "token revoked")
		accept(t, v, other, "the other issuer's erp is another client")
		assert.Equal(t, kcERP.ID, accept(t, v, hydra(nil)).ClientID, "a token issued after the revocation works")
	})
}

// mergeClaims overlays extra on c; a nil value removes the claim.
func mergeClaims(c, extra map[string]any) map[string]any {
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}
