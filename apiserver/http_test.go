package apiserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/internal/freeport"
	"github.com/touchpoint/touchpoint/internal/tcpproxy"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
)

const someEventType = "/event-types/ety-00000000-0000-4000-8000-000000000000"

func TestAuthentication(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	r := e.do(t, http.MethodGet, "/event-types", "", nil)
	p := requireProblem(t, r, http.StatusUnauthorized)
	assert.Equal(t, `Bearer realm="touchpoint"`, r.header.Get("WWW-Authenticate"))
	assert.Equal(t, "a bearer token is required", p["detail"])

	for _, h := range []string{"Bearer garbage", "bearer garbage", "Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "garbage"} {
		r := e.do(t, http.MethodGet, "/event-types", "", nil, header{"Authorization", h})
		requireProblem(t, r, http.StatusUnauthorized)
		assert.True(t, strings.HasPrefix(r.header.Get("WWW-Authenticate"), `Bearer realm="touchpoint", error="invalid_token"`),
			"%q: %q", h, r.header.Get("WWW-Authenticate"))
	}
	// Authentication comes before the body is looked at.
	r = e.do(t, http.MethodPost, "/event-types", "garbage", strings.Repeat("x", 100<<10), header{"Content-Type", "text/plain"})
	requireProblem(t, r, http.StatusUnauthorized)

	// An issuer the API cannot reach is 503 with Retry-After, not 401:
	// this verifier fetches the issuer's discovery document from a closed
	// port, so it never gets ready for the issuer of e.token.
	v := e.startVerifier(t, auth.Issuer{URL: e.issuerURL, DiscoveryURL: closedURL(t)}, testAudience)
	require.ErrorIs(t, v.Ready(), auth.ErrUnavailable)
	down := e.withAuth(t, v)
	r = down.do(t, http.MethodGet, "/event-types", e.token, nil)
	p = requireProblem(t, r, http.StatusServiceUnavailable)
	assert.Equal(t, "5", r.header.Get("Retry-After"))
	assert.Equal(t, "a dependency is unavailable; retry later", p["detail"])
	assert.NotContains(t, string(r.body), e.issuerURL)
	// Public routes need no token.
	assert.Equal(t, http.StatusOK, down.do(t, http.MethodGet, "/healthz", "", nil).status)
	assert.Equal(t, http.StatusOK, down.do(t, http.MethodGet, "/readyz", "", nil).status)

	// An error wrapping neither ErrInvalidToken nor ErrUnavailable breaks
	// the Authenticator contract: a wiring defect the real verifier cannot
	// be made to commit, so a stub stands in. It is a 500 that hides its
	// text.
	broken := e.withAuth(t, authFunc(func(context.Context, string) (auth.Principal, error) {
		return auth.Principal{}, errors.New("secret internals of the verifier")
	}))
	r = broken.do(t, http.MethodGet, "/event-types", e.token, nil)
	p = requireProblem(t, r, http.StatusInternalServerError)
	assert.NotContains(t, string(r.body), "secret internals")
	assert.Contains(t, p["detail"], r.header.Get("X-Request-Id"))
	assert.Contains(t, broken.logs.String(), "secret internals of the verifier")
}

// closedURL returns an http URL at which nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	addrs, err := freeport.Addrs(1) // nobody listens there
	require.NoError(t, err)
	return "http://" + addrs[0]
}

// authFunc adapts a function to auth.Authenticator, for the tests of an
// Authenticator that breaks its contract, which the real verifier cannot
// be made to do.
type authFunc func(ctx context.Context, rawToken string) (auth.Principal, error)

func (f authFunc) Authenticate(ctx context.Context, rawToken string) (auth.Principal, error) {
	return f(ctx, rawToken)
}

// Revoking a client's tokens or deleting the client locks its tokens out
// once the verifier's client cache has expired; the account's other
// clients keep working.
func TestRevokedAndDeletedClients(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, reason string
		lockOut      func(clientID string) error
	}{
		{"revoked", "token revoked", func(id string) error { _, err := e.store.Auth.RevokeTokens(ctx, id); return err }},
		{"deleted", "unknown client", func(id string) error { return e.store.Auth.DeleteClient(ctx, id) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := e.tokenFor(t, e.account, auth.GroupFull)
			require.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/event-types", tok, nil).status)

			require.NoError(t, tc.lockOut(clientOf(t, tok)))
			require.Eventually(t, func() bool {
				_, err := e.verifier.Authenticate(ctx, tok)
				return errors.Is(err, auth.ErrInvalidToken)
			}, 5*time.Second, 5*time.Millisecond, "the client cache never expired")

			r := e.do(t, http.MethodGet, "/event-types", tok, nil)
			p := requireProblem(t, r, http.StatusUnauthorized)
			assert.Equal(t, `Bearer realm="touchpoint", error="invalid_token", error_description="the access token is invalid or expired"`,
				r.header.Get("WWW-Authenticate"))
			assert.Equal(t, "the access token is invalid or expired", p["detail"], "the reason is not told")
			assert.Contains(t, e.logs.String(), "invalid token: "+tc.reason, "the reason is logged")
			assert.Equal(t, http.StatusOK, e.get(t, "/event-types").status, "another client of the account")
		})
	}
}

// The issuer grants tokens for the API's audience only, and an API whose
// verifier expects another audience refuses them.
func TestTokenAudience(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const otherAPI = "https://other-api.example"
	c, secret := e.newClient(t, e.account, auth.GroupFull)
	status, body := e.requestToken(t, url.Values{"grant_type": {"client_credentials"},
		"client_id": {c.ClientID}, "client_secret": {secret}, "audience": {otherAPI}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_target", body["error"], "%v", body)
	assert.NotContains(t, body, "access_token")

	v := e.startVerifier(t, auth.Issuer{URL: e.issuerURL}, otherAPI)
	require.Eventually(t, func() bool { return v.Ready() == nil }, 10*time.Second, 5*time.Millisecond)
	other := e.withAuth(t, v)
	r := other.do(t, http.MethodGet, "/event-types", e.token, nil)
	requireProblem(t, r, http.StatusUnauthorized)
	assert.True(t, strings.HasPrefix(r.header.Get("WWW-Authenticate"), `Bearer realm="touchpoint", error="invalid_token"`),
		r.header.Get("WWW-Authenticate"))
	assert.Contains(t, other.logs.String(), "invalid token: wrong audience")
	assert.Equal(t, http.StatusOK, e.get(t, "/event-types").status, "the API it was issued for")
}

func TestAccessGroups(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	et := e.create(t, "/event-types", map[string]any{"name": "checkout"})
	ch := e.create(t, "/channels", map[string]any{"name": "Shop"})
	settings, _ := items(t, e.get(t, "/invite-settings?limit=1"))
	etPath, chPath, isPath := "/event-types/"+et["id"].(string), "/channels/"+ch["id"].(string), "/invite-settings/"+settings[0]["id"].(string)

	reads := []string{"/event-types", etPath, "/channels", chPath, "/invite-settings", isPath}
	writes := []struct{ method, path, body string }{
		{http.MethodPost, "/event-types", `{"name":"new"}`},
		{http.MethodPatch, etPath, `{"active":false}`},
		{http.MethodPost, "/channels", `{"name":"new"}`},
		{http.MethodPatch, isPath, `{"active":false}`},
	}
	// The groups' tokens come from clients of those groups; the unknown
	// group, which the schema's CHECK keeps out of api_clients, comes from
	// a stub standing in for a verifier that breaks its contract: the API
	// must still deny it everything.
	unknown := e.withAuth(t, authFunc(func(context.Context, string) (auth.Principal, error) {
		return auth.Principal{AccountID: e.account, ClientID: "cli-stub", AccessGroup: "unknown"}, nil
	}))
	for _, group := range []string{auth.GroupEvents, auth.GroupReadonly, "unknown"} {
		api, tok := e, ""
		if group == "unknown" {
			api, tok = unknown, "any"
		} else {
			tok = e.tokenFor(t, e.account, group)
		}
		for _, path := range reads {
			r := api.do(t, http.MethodGet, path, tok, nil)
			if group == "unknown" {
				requireProblem(t, r, http.StatusForbidden)
			} else {
				assert.Equal(t, http.StatusOK, r.status, "%s GET %s: %s", group, path, r.body)
			}
		}
		for _, w := range writes {
			r := api.do(t, w.method, w.path, tok, w.body)
			p := requireProblem(t, r, http.StatusForbidden)
			assert.Contains(t, p["detail"], group, "%s %s", w.method, w.path)
		}
	}
	// Nothing was written.
	assert.Equal(t, et, e.get(t, etPath).object(t))
	assert.Equal(t, settings[0], e.get(t, isPath).object(t))
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := requireProblem(t, e.get(t, "/nope"), http.StatusNotFound)
	assert.Contains(t, p["detail"], "/nope")
	requireProblem(t, e.do(t, http.MethodGet, "/nope", "", nil), http.StatusNotFound)
	requireProblem(t, e.get(t, "/event-types/"), http.StatusNotFound)
	requireProblem(t, e.get(t, "/event-types/x/y"), http.StatusNotFound)

	for path, allow := range map[string]string{"/event-types": "POST, GET", "/event-types/x": "GET, PATCH",
		"/channels/x": "GET", "/invite-settings": "GET", "/healthz": "GET"} {
		r := e.do(t, http.MethodDelete, path, e.token, nil)
		requireProblem(t, r, http.StatusMethodNotAllowed)
		assert.Equal(t, allow, r.header.Get("Allow"), path)
	}
	r := e.do(t, http.MethodPut, "/invite-settings/x", "", `{}`)
	requireProblem(t, r, http.StatusMethodNotAllowed)
	assert.Equal(t, "GET, PATCH", r.header.Get("Allow"))
}

// Malformed ids are 404 without a query: the API's store here cannot
// reach PostgreSQL, so a query would be a 503. (Its token verifies against
// the issuer's own database.)
func TestMalformedIDsAnsweredWithoutQuery(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, unreachableStore(t))
	tok := e.token
	for _, path := range []string{
		"/event-types/ety-0B5E8F3C-8A3E-4F3E-9A57-1C2D3E4F5A6B", "/event-types/chl-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b",
		"/event-types/ety-1", "/event-types/ety-0b5e8f3c8a3e4f3e9a571c2d3e4f5a6b", "/channels/ety-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b",
		"/invite-settings/ist-%20", "/invite-settings/ist-..%2F..%2Fetc",
	} {
		p := requireProblem(t, e.do(t, http.MethodGet, path, tok, nil), http.StatusNotFound)
		assert.Contains(t, p["detail"], "not found", path)
	}
	requireProblem(t, e.do(t, http.MethodPatch, "/invite-settings/nope", tok, `{"active":true}`), http.StatusNotFound)
	requireProblem(t, e.do(t, http.MethodGet, someEventType, tok, nil), http.StatusServiceUnavailable)
}

// unreachableStore is a store whose PostgreSQL does not answer.
func unreachableStore(t *testing.T) *store.Store {
	t.Helper()
	addrs, err := freeport.Addrs(1) // nobody listens there
	require.NoError(t, err)
	addr := addrs[0]
	db, err := sqlx.Open("postgres", "postgres://postgres@"+addr+"/touchpoint?sslmode=disable&connect_timeout=2")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return storeset.New(db, "P7D")
}

func TestDatabaseDown(t *testing.T) {
	t.Parallel()
	proxy := tcpproxy.Start(t, "127.0.0.1:5432")
	dsn := testdb.NewURL(t)
	direct, err := sqlx.Open("postgres", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { direct.Close() })
	_, err = schema.Migrate(context.Background(), direct)
	require.NoError(t, err)
	db, err := sqlx.Open("postgres", strings.Replace(dsn, "127.0.0.1:5432", proxy.Addr(), 1)+"&connect_timeout=2")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	e := newEnvWith(t, storeset.New(db, "P7D"), func(o *apiserver.Options) {
		o.Readiness = func(context.Context) map[string]error {
			return map[string]error{"temporal": errors.New("connection refused"), "issuer": nil}
		}
	})

	r := e.do(t, http.MethodGet, "/readyz", "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, map[string]any{"status": "degraded",
		"dependencies": map[string]any{"postgresql": "ok", "temporal": "down", "issuer": "ok"}}, r.object(t))
	e.create(t, "/event-types", map[string]any{"name": "before the outage"})

	proxy.Cut() // PostgreSQL becomes unreachable, open connections break
	for _, req := range []struct{ method, path, body string }{
		{http.MethodGet, "/event-types", ""},
		{http.MethodGet, "/event-types", ""}, // after the pool noticed
		{http.MethodPost, "/event-types", `{"name":"during the outage"}`},
		{http.MethodGet, someEventType, ""},
		{http.MethodGet, "/invite-settings", ""},
	} {
		var body any
		if req.body != "" {
			body = req.body
		}
		r := e.do(t, req.method, req.path, e.token, body)
		p := requireProblem(t, r, http.StatusServiceUnavailable)
		assert.Equal(t, "5", r.header.Get("Retry-After"))
		assert.Equal(t, "a dependency is unavailable; retry later", p["detail"])
		assert.NotContains(t, string(r.body), "127.0.0.1")
	}
	// /readyz answers from a cache of at most a second.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		r = e.do(t, http.MethodGet, "/readyz", "", nil)
		assert.Equal(c, http.StatusServiceUnavailable, r.status, "%s", r.body)
	}, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, "unavailable", r.object(t)["status"])
	assert.Equal(t, "down", r.object(t)["dependencies"].(map[string]any)["postgresql"])
	assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/healthz", "", nil).status)
}

func TestBodyChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	post := func(body string, headers ...header) response {
		return e.do(t, http.MethodPost, "/event-types", e.token, body, headers...)
	}
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/jsonx", "", "application/json; charset=latin1"} {
		p := requireProblem(t, post(`{"name":"x"}`, header{"Content-Type", ct}), http.StatusUnsupportedMediaType)
		assert.Contains(t, p["detail"], "UTF-8", ct)
	}
	assert.Equal(t, http.StatusCreated, post(`{"name":"charset"}`, header{"Content-Type", "application/json; charset=UTF-8"}).status)

	big := `{"name":"` + strings.Repeat("x", apiserver.DefaultMaxBodyBytes) + `"}`
	requireProblem(t, post(big), http.StatusRequestEntityTooLarge)

	small := newEnv(t, func(o *apiserver.Options) { o.MaxBodyBytes = 1024 })
	r := small.do(t, http.MethodPost, "/channels", small.token, `{"name":"`+strings.Repeat("y", 1024)+`"}`)
	requireProblem(t, r, http.StatusRequestEntityTooLarge)

	for body, msg := range map[string]string{
		``:                         "the body is empty",
		`{"name":"x"} trailing`:    "unexpected data after the JSON object",
		`{"name":"x"}{"name":"y"}`: "unexpected data after the JSON object",
		`{"name":"x"`:              "malformed JSON",
		`{"name":'x'}`:             "malformed JSON at byte",
		`["x"]`:                    "must be a JSON object",
	} {
		p := requireProblem(t, post(body), http.StatusBadRequest)
		assert.Contains(t, p["detail"], msg, body)
	}
	r = post(`{"name":"x","name":"y"}`)
	requireProblem(t, r, http.StatusBadRequest, "name")
	assert.Contains(t, fieldMessage(t, r, "name"), `duplicated key "name"`)
	r = post(`{"Name":"x"}`)
	requireProblem(t, r, http.StatusBadRequest, "Name", "name")
	assert.Contains(t, fieldMessage(t, r, "Name"), `did you mean "name"?`)
	list, _ := items(t, e.get(t, "/event-types"))
	assert.Len(t, list, 1, "only the valid request created something")
}

func TestRequestIDAndLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(t, http.MethodGet, "/event-types?customerEmail=someone@example.com", e.token, nil, header{"X-Request-Id", "trace-1234.abc:def_9"})
	assert.Equal(t, "trace-1234.abc:def_9", r.header.Get("X-Request-Id"))
	requireProblem(t, r, http.StatusBadRequest)
	r = e.get(t, "/event-types")
	generated := r.header.Get("X-Request-Id")
	assert.Regexp(t, `^[0-9a-f]{32}$`, generated)
	for _, bad := range []string{"has space", strings.Repeat("a", 129), "inject\"quote", "ünïcode"} {
		r := e.do(t, http.MethodGet, "/healthz", "", nil, header{"X-Request-Id", bad})
		assert.Regexp(t, `^[0-9a-f]{32}$`, r.header.Get("X-Request-Id"), bad)
	}

	logs := e.logs.String()
	assert.Contains(t, logs, `"request_id":"trace-1234.abc:def_9"`)
	assert.Contains(t, logs, `"request_id":"`+generated+`"`)
	assert.Contains(t, logs, `"route":"/event-types"`)
	assert.Contains(t, logs, `"account_id":"`+e.account+`"`)
	assert.NotContains(t, logs, e.token, "tokens are never logged")
	assert.NotContains(t, logs, "someone@example.com", "query strings are never logged")
}

// A panic is a 500 without internals, logged at error level with its
// stack.
func TestPanicRecovered(t *testing.T) {
	t.Parallel()
	e := newEnv(t).withAuth(t, authFunc(func(context.Context, string) (auth.Principal, error) {
		panic("boom in the verifier")
	}))
	r := e.do(t, http.MethodGet, "/channels", "token", nil)
	p := requireProblem(t, r, http.StatusInternalServerError)
	assert.NotContains(t, string(r.body), "boom")
	assert.Contains(t, p["detail"], r.header.Get("X-Request-Id"))
	logs := e.logs.String()
	assert.Contains(t, logs, `"level":"ERROR"`)
	assert.Contains(t, logs, "panic: boom in the verifier")
	assert.Contains(t, logs, "goroutine") // the stack
}

func TestHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(t, http.MethodGet, "/healthz", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, map[string]any{"status": "ok"}, r.object(t))
	r = e.do(t, http.MethodGet, "/readyz", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, map[string]any{"status": "ok", "dependencies": map[string]any{"postgresql": "ok"}}, r.object(t))
	assert.Contains(t, e.logs.String(), `"level":"DEBUG"`, "probes are logged at debug")
}

// TestDrainFailsReadinessOnly: once the process drains, /readyz answers
// 503 "draining" at once (not after its one-second cache), with the
// dependencies it last saw, while every other route is served as before.
func TestDrainFailsReadinessOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	require.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/readyz", "", nil).status) // cached now
	e.api.Drain()
	r := e.do(t, http.MethodGet, "/readyz", "", nil)
	require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
	assert.Equal(t, map[string]any{"status": "draining", "dependencies": map[string]any{"postgresql": "ok"}}, r.object(t))
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/healthz", "", nil).status)
	e.create(t, "/event-types", map[string]any{"name": "while draining"})
}

// TestAddressesInPathsAreMaskedInLogs: a path that carries an email
// address or a mobile number is logged with the address masked, as the
// senders log it, whether or not a route matched.
func TestAddressesInPathsAreMaskedInLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/suppressions", map[string]any{"address": "greta.zimmermann@example.com"})
	e.create(t, "/suppressions", map[string]any{"address": "+4915112345678"})
	for _, p := range []string{
		"/suppressions/greta.zimmermann@example.com/history",
		"/suppressions/greta.zimmermann%40example.com/history",
		"/suppressions/%2B4915112345678/history",
		"/suppressions/greta.zimmermann@example.com/no-such-thing",
	} {
		e.get(t, p)
	}
	require.Equal(t, http.StatusNoContent, e.do(t, http.MethodDelete, "/suppressions/%2B4915112345678", e.token, nil).status)

	var paths []string
	for line := range strings.SplitSeq(strings.TrimSpace(e.logs.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["msg"] == "request" && strings.HasPrefix(rec["path"].(string), "/suppressions/") {
			paths = append(paths, rec["path"].(string))
		}
	}
	assert.Equal(t, []string{
		"/suppressions/g***@example.com/history",
		"/suppressions/g***@example.com/history",
		"/suppressions/***5678/history",
		"/suppressions/g***@example.com/no-such-thing",
		"/suppressions/***5678",
	}, paths)
	logs := e.logs.String()
	for _, secret := range []string{"greta.zimmermann", "15112345678", "4915112345678"} {
		assert.NotContains(t, logs, secret, "no full address in the log")
	}
}
