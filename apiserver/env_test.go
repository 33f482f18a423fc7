package apiserver_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
)

// fakeAuth maps opaque test tokens to principals. It stands in for the
// real verifier until these tests switch to tokens of the built-in
// issuer; tokenFor is the only place that makes tokens.
type fakeAuth struct {
	mu     sync.Mutex
	tokens map[string]auth.Principal
	err    error // when set, every Authenticate fails with it
}

func (a *fakeAuth) Authenticate(_ context.Context, raw string) (auth.Principal, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return auth.Principal{}, a.err
	}
	p, ok := a.tokens[raw]
	if !ok {
		return auth.Principal{}, fmt.Errorf("%w: unknown test token", auth.ErrInvalidToken)
	}
	return p, nil
}

func (a *fakeAuth) fail(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.err = err
}

// env is one API server over a fresh database, with an account ("A") and
// its default channel.
type env struct {
	store   *store.Store
	auth    *fakeAuth
	srv     *httptest.Server
	logs    *syncBuffer
	account string
	channel string // the account's Default channel
	token   string // a full-access token of the account
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newEnv(t *testing.T, configure ...func(*apiserver.Options)) *env {
	t.Helper()
	return newEnvWith(t, store.New(testdb.New(t), "P7D"), configure...)
}

func newEnvWith(t *testing.T, st *store.Store, configure ...func(*apiserver.Options)) *env {
	t.Helper()
	e := &env{store: st, auth: &fakeAuth{tokens: map[string]auth.Principal{}}, logs: &syncBuffer{}}
	opts := apiserver.Options{
		Store:  st,
		Auth:   e.auth,
		Logger: slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, c := range configure {
		c(&opts)
	}
	e.srv = httptest.NewServer(apiserver.New(opts))
	t.Cleanup(e.srv.Close)
	if st.DB().PingContext(context.Background()) == nil {
		acc, ch, err := st.CreateAccount(context.Background(), "A")
		require.NoError(t, err)
		e.account, e.channel = acc.ID, ch.ID
		e.token = e.tokenFor(t, acc.ID, store.GroupFull)
	}
	return e
}

// tokenFor returns a bearer token of a client of accountID in group.
func (e *env) tokenFor(t testing.TB, accountID, group string) string {
	t.Helper()
	b := make([]byte, 16)
	rand.Read(b)
	tok := "test-" + hex.EncodeToString(b)
	e.auth.mu.Lock()
	defer e.auth.mu.Unlock()
	e.auth.tokens[tok] = auth.Principal{AccountID: accountID, ClientID: "cli-" + group, AccessGroup: group, TokenID: tok}
	return tok
}

// otherAccount creates a second tenant and returns its full token.
func (e *env) otherAccount(t *testing.T) (accountID, token string) {
	t.Helper()
	acc, _, err := e.store.CreateAccount(context.Background(), "B")
	require.NoError(t, err)
	return acc.ID, e.tokenFor(t, acc.ID, store.GroupFull)
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
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
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
