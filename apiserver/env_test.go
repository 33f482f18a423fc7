package apiserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/console"
	"github.com/touchpoint/touchpoint/console/signin"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/internal/syncbuf"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/pages"
	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/authdb"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/webhook"
)

const (
	// testSecretKey is TOUCHPOINT_SECRET_KEY of every test issuer.
	testSecretKey = "apiserver-test-secret-key-0123456789abcdef"
	// testAudience is the API's base URL as the issuer and verifier know it.
	testAudience = "http://api.touchpoint.test"
	// clientCacheTTL is how long the test verifiers cache client rows; the
	// default (2s) would make revocation tests wait that long.
	clientCacheTTL = 50 * time.Millisecond
)

// env is one API server over a fresh database, with an account ("A") and
// its default channel, authenticating with a real verifier of a real
// built-in issuer served by httptest.
type env struct {
	store     *store.Store
	authStore *store.Store // the issuer's and verifier's: store, unless that cannot reach PostgreSQL
	issuerURL string
	outbox    string // where the issuer mails people's sign-in links
	verifier  *auth.Verifier
	srv       *httptest.Server
	api       *apiserver.Server // what srv serves
	logs      *syncbuf.Buffer
	account   string
	channel   string // the account's Default channel
	token     string // a full-access token of the account
	// The signed links of the public pages, as invites carry them.
	feedbackLinks, unsubscribeLinks *signedlink.Links
}

// testLinks makes the link makers of the public pages, under the test
// server's path layout (the host does not matter to the pages).
func testLinks(t testing.TB) (fb, unsub *signedlink.Links) {
	t.Helper()
	fb, err := signedlink.New("https://api.touchpoint.test/feedback", secretkey.Derive(testSecretKey, secretkey.FeedbackLink))
	require.NoError(t, err)
	unsub, err = signedlink.New("https://api.touchpoint.test"+pages.UnsubscribePath, secretkey.Derive(testSecretKey, secretkey.Unsubscribe))
	require.NoError(t, err)
	return fb, unsub
}

// testWebhookSecrets seals webhook secrets as the API and worker of one
// deployment do, with the key derived from testSecretKey.
func testWebhookSecrets(t testing.TB) *webhook.SecretBox {
	t.Helper()
	box, err := webhook.NewSecretBox(secretkey.Derive(testSecretKey, secretkey.WebhookSecret))
	require.NoError(t, err)
	return box
}

// testPublicationKeys keeps the accounts' publication keys in st, sealed
// as the API of a deployment with testSecretKey does.
func testPublicationKeys(t testing.TB, st *store.Store) *publication.Keys {
	t.Helper()
	k, err := publication.NewKeys(st.Reviews, secretkey.Derive(testSecretKey, secretkey.PublicationKey), nil)
	require.NoError(t, err)
	return k
}

func newEnv(t testing.TB, configure ...func(*apiserver.Options)) *env {
	t.Helper()
	return newEnvWith(t, storeset.New(testdb.New(t), "P7D"), configure...)
}

// newEnvWith serves the API over st. When st cannot reach PostgreSQL (a
// test of the API with its database down from the start), the issuer and
// the verifier get a database of their own, so that tokens still verify.
func newEnvWith(t testing.TB, st *store.Store, configure ...func(*apiserver.Options)) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{store: st, authStore: st, logs: &syncbuf.Buffer{}}
	if st.DB().PingContext(ctx) != nil {
		e.authStore = storeset.New(testdb.New(t), "P7D")
	}
	e.startIssuer(t)
	e.verifier = e.startVerifier(t, auth.Issuer{URL: e.issuerURL}, testAudience)
	require.Eventually(t, func() bool { return e.verifier.Ready() == nil }, 10*time.Second, 5*time.Millisecond,
		"the verifier did not discover the issuer")

	e.feedbackLinks, e.unsubscribeLinks = testLinks(t)
	opts := apiserver.Options{Events: st.Events, TemplateStore: st.Templates, Suppressions: st.Suppressions,
		Reports: st.Reports, Erasure: st, DB: st.DB(), Accounts: st.Accounts, Stats: st.Stats, Webhooks: st.Webhooks, Reviews: st.Reviews, Invites: st.Invites, Auth: e.verifier, Logger: e.logger(), FeedbackLinks: e.feedbackLinks, UnsubscribeLinks: e.unsubscribeLinks,
		SMS: testSMS(), WebhookSecrets: testWebhookSecrets(t), PublicationKeys: testPublicationKeys(t, st)}
	for _, c := range configure {
		c(&opts)
	}
	e.api = apiserver.New(opts)
	e.srv = httptest.NewServer(validated(t, e.api, false))
	t.Cleanup(e.srv.Close)

	acc, ch, err := e.authStore.Accounts.CreateAccount(ctx, "A")
	require.NoError(t, err)
	e.account, e.channel = acc.ID, ch.ID
	e.token = e.tokenFor(t, acc.ID, auth.GroupFull)
	return e
}

func (e *env) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// startIssuer serves the built-in issuer on e.authStore until the test
// ends. Its own logs go to the test output.
func (e *env) startIssuer(t testing.TB) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	e.issuerURL = "http://" + ts.Listener.Addr().String()
	// People sign in to the console through it, their links mailed into
	// e.outbox.
	e.outbox = t.TempDir()
	mailer, err := mail.NewDir(e.outbox, "Touchpoint <sign-in@touchpoint.test>", nil)
	require.NoError(t, err)
	issuer, err := authserver.New(context.Background(), authserver.Options{Store: e.authStore.Auth, Issuer: e.issuerURL,
		Audience: testAudience, SecretKey: testSecretKey, Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
		People: persondb.New(pg.NewDB(e.authStore.DB())), Mail: mailer, RelyingParties: []authserver.RelyingParty{{
			ClientID: signin.ClientID, RedirectURIs: []string{testAudience + signin.CallbackPath}, Home: testAudience + console.HomePath}}})
	require.NoError(t, err)
	ts.Config.Handler = validated(t, issuer, true)
	ts.Start()
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); issuer.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// startVerifier runs a verifier of is's tokens for audience on
// e.authStore until the test ends; it does not wait for discovery.
func (e *env) startVerifier(t testing.TB, is auth.Issuer, audience string) *auth.Verifier {
	t.Helper()
	v, err := auth.New(auth.Options{Store: e.authStore.Auth, Issuers: []auth.Issuer{is}, BuiltInIssuer: e.issuerURL,
		Audience: audience, ClientCacheTTL: clientCacheTTL, DiscoveryRetry: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	return v
}

// withAuth returns a second API server over e's store that authenticates
// with a instead of e's verifier; e's accounts and tokens carry over, the
// configure options of e do not, and it has logs of its own.
func (e *env) withAuth(t *testing.T, a auth.Authenticator) *env {
	t.Helper()
	c := *e
	c.logs = &syncbuf.Buffer{}
	c.srv = httptest.NewServer(validated(t, apiserver.New(apiserver.Options{Events: e.store.Events, TemplateStore: e.store.Templates, Suppressions: e.store.Suppressions,
		Reports: e.store.Reports, Erasure: e.store, DB: e.store.DB(), Accounts: e.store.Accounts, Stats: e.store.Stats, Webhooks: e.store.Webhooks, Reviews: e.store.Reviews, Invites: e.store.Invites, Auth: a, Logger: c.logger(),
		FeedbackLinks: e.feedbackLinks, UnsubscribeLinks: e.unsubscribeLinks, WebhookSecrets: testWebhookSecrets(t),
		PublicationKeys: testPublicationKeys(t, e.store)}), false))
	t.Cleanup(c.srv.Close)
	return &c
}

// requestToken posts a client-credentials request to the issuer's token
// endpoint and returns the status and the JSON answer.
func (e *env) requestToken(t testing.TB, form url.Values) (int, map[string]any) {
	t.Helper()
	res, err := http.PostForm(e.issuerURL+authserver.TokenPath, form)
	require.NoError(t, err)
	defer res.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
	return res.StatusCode, body
}

// newClient creates a built-in API client of accountID in group and
// returns it with its secret.
func (e *env) newClient(t testing.TB, accountID, group string) (authdb.Client, string) {
	t.Helper()
	secret, hash := authserver.NewClientSecret(secretkey.Derive(testSecretKey, secretkey.ClientSecret))
	c, err := e.authStore.Auth.CreateClient(context.Background(), accountID, "test "+group, group, hash)
	require.NoError(t, err)
	return c, secret
}

// tokenFor creates an API client of accountID in group and returns the
// access token the issuer grants it. It is the only place tokens are made.
func (e *env) tokenFor(t testing.TB, accountID, group string) string {
	t.Helper()
	c, secret := e.newClient(t, accountID, group)
	status, body := e.requestToken(t, url.Values{"grant_type": {"client_credentials"},
		"client_id": {c.ClientID}, "client_secret": {secret}, "audience": {testAudience}})
	require.Equal(t, http.StatusOK, status, "%v", body)
	tok, _ := body["access_token"].(string)
	require.NotEmpty(t, tok, "%v", body)
	return tok
}

// clientOf returns the id of the API client a token was issued to (its
// azp claim), read without verification.
func clientOf(t testing.TB, tok string) string {
	t.Helper()
	segs := strings.Split(tok, ".")
	require.Len(t, segs, 3)
	payload, err := base64.RawURLEncoding.DecodeString(segs[1])
	require.NoError(t, err)
	var claims struct {
		AZP string `json:"azp"`
	}
	require.NoError(t, json.Unmarshal(payload, &claims))
	require.NotEmpty(t, claims.AZP)
	return claims.AZP
}

// otherAccount creates a second tenant and returns its full token.
func (e *env) otherAccount(t testing.TB) (accountID, token string) {
	t.Helper()
	acc, _, err := e.store.Accounts.CreateAccount(context.Background(), "B")
	require.NoError(t, err)
	return acc.ID, e.tokenFor(t, acc.ID, auth.GroupFull)
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// object decodes the body as a JSON object.
func (r response) object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

// request options
type header struct{ name, value string }

// do sends a request with token (none when ""); body is sent as is when
// a string, else as JSON; a JSON Content-Type is set for any body unless
// a header option overrides it.
func (e *env) do(t testing.TB, method, path, token string, body any, headers ...header) response {
	t.Helper()
	return e.doOn(t, e.srv.URL, method, path, token, body, headers...)
}

// doOn is do against another server at base, with the same client.
func (e *env) doOn(t testing.TB, base, method, path, token string, body any, headers ...header) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		if s, ok := body.(string); ok {
			rd = strings.NewReader(s)
		} else {
			b, err := json.Marshal(body)
			require.NoError(t, err)
			rd = bytes.NewReader(b)
		}
	}
	req, err := http.NewRequest(method, base+path, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, h := range headers {
		req.Header.Set(h.name, h.value)
	}
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

func (e *env) get(t testing.TB, path string) response {
	return e.do(t, http.MethodGet, path, e.token, nil)
}

// create POSTs and requires a 201; it returns the resource.
func (e *env) create(t testing.TB, path string, body any) map[string]any {
	t.Helper()
	r := e.do(t, http.MethodPost, path, e.token, body)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	return r.object(t)
}

var timestampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// requireProblem checks an RFC 9457 answer and returns it; each field
// given must appear in errors (in any order).
func requireProblem(t testing.TB, r response, status int, fields ...string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.status, "%s", r.body)
	assert.Equal(t, "application/problem+json", r.header.Get("Content-Type"))
	p := r.object(t)
	assert.Equal(t, "about:blank", p["type"])
	assert.Equal(t, http.StatusText(status), p["title"])
	assert.EqualValues(t, status, p["status"])
	assert.NotEmpty(t, p["detail"])
	assert.Equal(t, p["detail"], p["Message"])
	assert.Equal(t, r.header.Get("X-Request-Id"), p["requestId"])
	if len(fields) > 0 {
		got := map[string]bool{}
		for _, fe := range problemErrors(t, p) {
			got[fe.Field] = true
		}
		for _, f := range fields {
			assert.True(t, got[f], "no error for %q in %s", f, r.body)
		}
	}
	return p
}

type fieldError struct{ Field, Message string }

func problemErrors(t testing.TB, p map[string]any) []fieldError {
	t.Helper()
	var out []fieldError
	list, _ := p["errors"].([]any)
	for _, item := range list {
		m := item.(map[string]any)
		out = append(out, fieldError{Field: m["field"].(string), Message: m["message"].(string)})
	}
	return out
}

// fieldMessage returns the message of the problem's error for field.
func fieldMessage(t testing.TB, r response, field string) string {
	t.Helper()
	for _, fe := range problemErrors(t, r.object(t)) {
		if fe.Field == field {
			return fe.Message
		}
	}
	t.Fatalf("no error for %q in %s", field, r.body)
	return ""
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// items returns a list answer's items and nextCursor.
func items(t testing.TB, r response) ([]map[string]any, any) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	body := r.object(t)
	require.ElementsMatch(t, []string{"items", "nextCursor"}, keys(body))
	var out []map[string]any
	for _, it := range body["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out, body["nextCursor"]
}

func ids(list []map[string]any) []string {
	var out []string
	for _, m := range list {
		out = append(out, m["id"].(string))
	}
	return out
}
