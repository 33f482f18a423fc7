package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/internal/syncbuf"
	"github.com/touchpoint/touchpoint/internal/tcpproxy"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/workflows"
)

// stack is the production topology in one test process: the issuer, the
// API (with its outbox starter) and the worker, wired exactly as the
// commands wire them, against a fresh PostgreSQL database, a Temporal dev
// server (in a helper process, see internal/testtemporal) and a real SMTP
// listener. PostgreSQL and Temporal are
// reached through TCP proxies, so tests can cut them off.
type stack struct {
	t        *testing.T // nil in a benchmark: helpers that need it are for tests only
	tb       testing.TB // the test or benchmark
	cfg      config.Config
	st       *store.Store // through the PostgreSQL proxy, like the processes
	direct   *store.Store // straight to PostgreSQL, for checks during an outage
	temporal client.Client
	smtp     *smtptest.Server
	pg       *tcpproxy.Proxy
	tp       *tcpproxy.Proxy // in front of Temporal
	creds    devCredentials
	logs     *syncbuf.Buffer
	running  map[string]func() // stops a running part
	metrics  *metrics.Set
}

// newStack starts everything; vars override the test configuration. A
// benchmark can run it too: start and startWorker use only tb.
func newStack(t testing.TB, vars map[string]string) *stack {
	t.Helper()
	ctx := context.Background()
	dbURL := testdb.NewURL(t)
	directDB, err := store.OpenPool(ctx, dbURL, 2) // the test's own checks
	require.NoError(t, err)
	t.Cleanup(func() { directDB.Close() })
	_, err = schema.Migrate(ctx, directDB)
	require.NoError(t, err)

	logs := &syncbuf.Buffer{}
	temporal := testtemporal.Start(t, testtemporal.Options{SearchAttributes: workflows.SearchAttributes(), LogLevel: "error", Stderr: logs})

	tt, _ := t.(*testing.T)
	s := &stack{t: tt, tb: t, logs: logs, running: map[string]func(){},
		smtp: smtptest.Start(t, smtptest.Options{}),
		pg:   tcpproxy.Start(t, "127.0.0.1:5432"),
		tp:   tcpproxy.Start(t, temporal.Address())}
	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	authLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	env := map[string]string{
		"DATABASE_URL":                        strings.Replace(dbURL, "127.0.0.1:5432", s.pg.Addr(), 1) + "&connect_timeout=2",
		"TEMPORAL_ADDRESS":                    s.tp.Addr(),
		"TOUCHPOINT_BASE_URL":                 "http://" + apiLn.Addr().String(),
		"TOUCHPOINT_FEEDBACK_URL":             "http://" + apiLn.Addr().String() + "/feedback",
		"TOUCHPOINT_AUTH_URL":                 "http://" + authLn.Addr().String(),
		"TOUCHPOINT_SMTP_URL":                 s.smtp.URL(),
		"TOUCHPOINT_SECRET_KEY":               "stack-test-secret-key-0123456789abcdef",
		"TOUCHPOINT_DEFAULT_INVITE_DELAY":     "PT0S",
		"TOUCHPOINT_SEND_RETRY_INITIAL":       "100ms",
		"TOUCHPOINT_SEND_RETRY_MAX":           "500ms",
		"TOUCHPOINT_TOKEN_USE_FLUSH_INTERVAL": "100ms",
		// The tests poll the API hard; the limit itself is tested in apiserver.
		"TOUCHPOINT_RATE_LIMIT": "100000",
		"TOUCHPOINT_RATE_BURST": "100000",
		// The suite's connection budget (internal/testdb).
		"TOUCHPOINT_DB_MAX_CONNS": strconv.Itoa(testdb.ProcessMaxConns),
	}
	for k, v := range vars {
		env[k] = v
	}
	s.cfg, err = config.Load(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.NoError(t, validate(s.cfg, true))

	logger := slog.New(slog.NewJSONHandler(s.logs, nil))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stack logs:\n%s", s.logs)
		}
	})
	st, err := openStore(ctx, s.cfg)
	require.NoError(t, err)
	t.Cleanup(func() { st.DB().Close() })
	s.st = st
	s.direct = storeset.New(directDB, s.cfg.DefaultInviteDelay)
	s.creds, err = seedDev(ctx, st, newSecretFunc(s.cfg))
	require.NoError(t, err)

	s.metrics = metrics.New()
	tc, err := dialTemporal(s.cfg, logger, s.metrics)
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	s.temporal = tc

	authRun, err := authPart(ctx, s.cfg, st, logger, authLn, s.metrics, t.TempDir())
	require.NoError(t, err)
	apiRun, _, err := apiPart(s.cfg, st, tc, logger, apiLn, s.metrics)
	require.NoError(t, err)
	s.start("auth", authRun)
	s.start("api", apiRun)
	s.startWorker()
	// Ready when the API has discovered the issuer (it answers 503 until then).
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		res, err := http.Get(s.cfg.BaseURL + "/readyz")
		if assert.NoError(col, err) {
			var body struct{ Dependencies map[string]string }
			assert.NoError(col, json.NewDecoder(res.Body).Decode(&body))
			res.Body.Close()
			assert.Equal(col, "ok", body.Dependencies["issuer"])
		}
	}, time.Minute, 10*time.Millisecond)
	return s
}

// start runs a part until the test ends or stop(name) is called.
func (s *stack) start(name string, p part) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			assert.NoError(s.tb, err, "%s stopped with an error", name)
		case <-time.After(time.Minute):
			s.tb.Errorf("%s did not stop within a minute", name)
		}
	}
	s.running[name] = stop
	s.tb.Cleanup(stop)
}

func (s *stack) stop(name string) { s.running[name]() }

// startWorker starts (or restarts) the invite worker.
func (s *stack) startWorker() {
	p, _, err := workerPart(s.cfg, s.st, s.temporal, slog.New(slog.NewJSONHandler(s.logs, nil)), "")
	require.NoError(s.tb, err)
	s.start("worker", p)
}

// client returns an API client with a fresh token of the seeded client.
func (s *stack) client() *apiClient {
	tok, status := token(s.t, s.cfg.AuthURL, s.cfg.BaseURL, s.creds.ClientID, s.creds.ClientSecret)
	require.Equal(s.t, http.StatusOK, status)
	return &apiClient{t: s.t, api: s.cfg.BaseURL, token: tok}
}

// event is a minimal event of type typ to a customer address.
func (s *stack) event(typ, email string) map[string]any {
	return map[string]any{
		"customer":      map[string]any{"email": email, "firstName": "Ann"},
		"type":          typ,
		"channel":       map[string]any{"id": s.creds.ChannelID},
		"transaction":   map[string]any{"reference": "order-1", "date": time.Now().UTC().Format(time.RFC3339)},
		"system":        "shop",
		"systemVersion": "1.0",
	}
}

// eventType creates an event type whose setting sends at once and never
// throttles, so one customer can receive several invites in a test.
func (s *stack) eventType(c *apiClient, name string) {
	status, et := c.do(http.MethodPost, "/event-types", map[string]any{"name": name})
	require.Equal(s.t, http.StatusCreated, status, "%v", et)
	status, list := c.do(http.MethodGet, "/invite-settings?eventTypeId="+et["id"].(string), nil)
	require.Equal(s.t, http.StatusOK, status)
	for _, it := range list["items"].([]any) {
		id := it.(map[string]any)["id"].(string)
		status, _ := c.do(http.MethodPatch, "/invite-settings/"+id, map[string]any{"delay": "PT0S", "minDaysBetweenInvites": 0})
		require.Equal(s.t, http.StatusOK, status)
	}
}

// accept posts an event and requires a 202.
func (s *stack) accept(c *apiClient, body map[string]any) string {
	status, res := c.do(http.MethodPost, "/events", body)
	require.Equal(s.t, http.StatusAccepted, status, "%v", res)
	return res["EventRef"].(string)
}

// waitStatus waits until every event's invite has the status.
func (s *stack) waitStatus(c *apiClient, status string, refs ...string) {
	s.t.Helper()
	require.EventuallyWithT(s.t, func(col *assert.CollectT) {
		for _, ref := range refs {
			code, ev := c.do(http.MethodGet, "/events/"+ref, nil)
			if assert.Equal(col, http.StatusOK, code) {
				assert.Equal(col, status, inviteOf(ev)["status"], ref)
			}
		}
	}, time.Minute, 50*time.Millisecond)
}

// waitClosed waits until the event's workflow run has closed, so nothing
// more can happen, and returns its status.
func (s *stack) waitClosed(ref string) string {
	s.t.Helper()
	var status string
	require.EventuallyWithT(s.t, func(col *assert.CollectT) {
		d, err := s.temporal.DescribeWorkflowExecution(context.Background(), workflows.WorkflowID(ref), "")
		if !assert.NoError(col, err) {
			return
		}
		status = d.WorkflowExecutionInfo.Status.String()
		assert.NotEqual(col, "Running", status)
	}, time.Minute, 50*time.Millisecond)
	return status
}

// mailsTo counts the messages the SMTP server accepted for each event.
func (s *stack) mailsByEvent() map[string]int {
	n := map[string]int{}
	for _, m := range s.smtp.Messages() {
		msg, err := m.Parse()
		require.NoError(s.t, err)
		id := strings.Trim(msg.Header.Get("Message-Id"), "<> ")
		n[strings.SplitN(id, "@", 2)[0]]++
	}
	return n
}

func (s *stack) count(query string, args ...any) int {
	var n int
	require.NoError(s.t, s.direct.DB().Get(&n, query, args...))
	return n
}

func jsonBody(t *testing.T, v any) io.Reader {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return bytes.NewReader(b)
}

// inviteOf is the invite of an event answer; nil (every field absent) when
// the answer was an error, so polling assertions fail instead of panicking.
func inviteOf(ev map[string]any) map[string]any {
	m, _ := ev["invite"].(map[string]any)
	return m
}
