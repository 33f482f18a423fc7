package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the driver
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/freeport"
	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/internal/syncbuf"
	"github.com/touchpoint/touchpoint/internal/testbin"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
	"github.com/touchpoint/touchpoint/workflows"
)

// stack is the production topology on one machine: a Temporal server on
// PostgreSQL persistence (in a helper process), a fresh Touchpoint
// database, a real SMTP server, and `touchpoint auth`, `api` ×2 and
// `worker` ×2 as processes of the real binary, configured by the
// environment alone, on free loopback ports. Both APIs carry the same
// public URL (the token audience), as replicas behind one load balancer do.
type stack struct {
	tb       testing.TB
	bin      string
	env      map[string]string // every process's environment
	db       *sqlx.DB          // the Touchpoint database, for checks
	temporal *testtemporal.Server
	smtp     *smtptest.Server

	authURL    string
	apiAddrs   [2]string // listen addresses of the two APIs
	apiMetrics [2]string // their metrics listeners
	workerAddr [2]string // health listeners of the two workers

	mu    sync.Mutex
	procs map[string]*proc

	creds credentials
}

// credentials are the seeded account's and client's.
type credentials struct {
	AccountID    string `json:"accountId"`
	ChannelID    string `json:"channelId"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
}

// stackVars override the stack's settings.
type stackVars map[string]string

// startStack brings the whole topology up and waits until every process
// is ready: the APIs have discovered the issuer, the workers poll.
func startStack(tb testing.TB, vars stackVars) *stack {
	tb.Helper()
	s := &stack{tb: tb, bin: touchpointBinary(tb), smtp: smtptest.Start(tb, smtptest.Options{}), procs: map[string]*proc{}}
	// Temporal logs the calls cut off by the kills as errors: shown only
	// when the test fails.
	temporalLog := &syncbuf.Buffer{}
	s.temporal = testtemporal.Start(tb, testtemporal.Options{
		SearchAttributes: workflows.SearchAttributes(),
		PostgresURL:      testdb.ServerURL(),
		Stderr:           temporalLog,
		Metrics:          true, // the Actions it counts
	})
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("temporal server output, last 6 KiB:\n%s", temporalLog.Tail(6<<10))
		}
	})
	dbURL := vars["DATABASE_URL"] // a database of the caller's
	if dbURL == "" {
		dbURL = testdb.NewURL(tb)
	}
	var err error
	s.db, err = sqlx.Open("postgres", dbURL)
	require.NoError(tb, err)
	s.db.SetMaxOpenConns(2) // the test's own reads and fixtures
	tb.Cleanup(func() { s.db.Close() })

	addrs := freeAddrs(tb, 7)
	s.authURL = "http://" + addrs[0]
	s.apiAddrs = [2]string{addrs[1], addrs[2]}
	s.workerAddr = [2]string{addrs[3], addrs[4]}
	s.apiMetrics = [2]string{addrs[5], addrs[6]}
	base := "http://" + s.apiAddrs[0]
	s.env = map[string]string{
		"DATABASE_URL":       dbURL,
		"TEMPORAL_ADDRESS":   s.temporal.Address(),
		"TEMPORAL_NAMESPACE": "default",
		// Temporal's configuration comes from these variables alone, not
		// from a temporal.toml of whoever runs the tests.
		"TEMPORAL_CONFIG_FILE":            filepath.Join(tb.TempDir(), "absent.toml"),
		"TOUCHPOINT_BASE_URL":             base,
		"TOUCHPOINT_FEEDBACK_URL":         base + "/feedback",
		"TOUCHPOINT_AUTH_URL":             s.authURL,
		"TOUCHPOINT_AUTH_ADDR":            addrs[0],
		"TOUCHPOINT_SMTP_URL":             s.smtp.URL(),
		"TOUCHPOINT_SECRET_KEY":           "e2e-test-secret-key-0123456789abcdef",
		"TOUCHPOINT_DEFAULT_INVITE_DELAY": "PT0S",
		// A send attempt on a killed worker is retried once it has run
		// this long, instead of the default two minutes; still far longer
		// than a send takes on a busy machine (an attempt that ran out
		// mid-send would end delivery_uncertain), and longer than the
		// topology test holds rows that a send under way may wait on:
		// holdSends lets go of them every 15 s, but on a loaded machine a
		// send was seen waiting through two rounds and more, ran past a
		// timeout of 30 s and ended delivery_uncertain, as it must.
		"TOUCHPOINT_SEND_TIMEOUT":       "90s",
		"TOUCHPOINT_SEND_RETRY_INITIAL": "100ms",
		"TOUCHPOINT_SEND_RETRY_MAX":     "1s",
		// Per replica; the limit itself is tested in apiserver.
		"TOUCHPOINT_RATE_LIMIT": "1000000",
		"TOUCHPOINT_RATE_BURST": "1000000",
		"TOUCHPOINT_LOG_LEVEL":  "warn",
		// Five processes share one PostgreSQL server with the rest of
		// the test suite (its connection budget: internal/testdb).
		"TOUCHPOINT_DB_MAX_CONNS": strconv.Itoa(testdb.ProcessMaxConns),
	}
	for k, v := range vars {
		s.env[k] = v
	}

	// The schema and the search attributes, as a deployment does it.
	s.runOnce("migrate", "--temporal-wait=1m")
	var acc credentials
	require.NoError(tb, json.Unmarshal(s.runOnce("accounts", "create", "--name", "Shop", "--json"), &acc))
	require.NoError(tb, json.Unmarshal(s.runOnce("clients", "create", "--account", acc.AccountID, "--json"), &s.creds))
	s.creds.ChannelID = acc.ChannelID

	s.start("auth")
	s.start("api1")
	s.start("api2")
	s.start("worker1")
	s.start("worker2")
	for _, name := range []string{"api1", "api2", "worker1", "worker2"} {
		s.waitReady(name)
	}
	return s
}

// touchpointBinary is a copy of the touchpoint binary of this tree, in
// the test's temporary directory: processes started again later in the
// test run the very binary the first ones ran, whatever rebuilds the
// shared one meanwhile.
func touchpointBinary(tb testing.TB) string {
	tb.Helper()
	src, err := os.Open(testbin.Touchpoint(tb))
	require.NoError(tb, err)
	defer src.Close()
	path := filepath.Join(tb.TempDir(), "touchpoint")
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	require.NoError(tb, err)
	_, err = io.Copy(dst, src)
	require.NoError(tb, errors.Join(err, dst.Close()))
	return path
}

// freeAddrs returns n loopback addresses with free ports, kept from other
// picks until the processes of the test bind them (freeport).
func freeAddrs(tb testing.TB, n int) []string {
	tb.Helper()
	addrs, err := freeport.Addrs(n)
	require.NoError(tb, err)
	return addrs
}

// childEnv is a child's environment: the test's own without any setting
// of Touchpoint's or Temporal's, then the stack's and extra.
func (s *stack) childEnv(extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "TOUCHPOINT_") || strings.HasPrefix(k, "TEMPORAL_") || k == "DATABASE_URL" {
			continue
		}
		env = append(env, kv)
	}
	for _, m := range []map[string]string{s.env, extra} {
		for k, v := range m {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// runOnce runs a command to its end and returns its standard output.
func (s *stack) runOnce(args ...string) []byte {
	s.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = s.childEnv(nil)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(s.tb, err, "touchpoint %s:\n%s", strings.Join(args, " "), stderr.String())
	return out
}

// processes are the long-running ones: the subcommand and the settings
// that set each replica apart.
func (s *stack) process(name string) (subcommand string, vars map[string]string) {
	switch name {
	case "auth":
		return "auth", nil
	case "api1", "api2":
		// PGAPPNAME names the replica's sessions in pg_stat_activity.
		return "api", map[string]string{"TOUCHPOINT_API_ADDR": s.apiAddrs[name[3]-'1'], "TOUCHPOINT_METRICS_ADDR": s.apiMetrics[name[3]-'1'],
			"PGAPPNAME": name}
	case "worker1", "worker2":
		return "worker", map[string]string{"TOUCHPOINT_WORKER_ADDR": s.workerAddr[name[6]-'1']}
	}
	s.tb.Fatalf("no process %q", name)
	return "", nil
}

// apiURL is the address of an API replica (api1 serves the public URL).
func (s *stack) apiURL(i int) string { return "http://" + s.apiAddrs[i] }

// start runs (or runs again) a process of the stack.
func (s *stack) start(name string) *proc {
	s.tb.Helper()
	sub, vars := s.process(name)
	p := startProc(s.tb, s.bin, name, s.childEnv(vars), sub)
	s.mu.Lock()
	s.procs[name] = p
	s.mu.Unlock()
	return p
}

// startProc runs `bin args…` in env until the test ends (then SIGINT,
// SIGKILL if it does not stop in time); its output is logged when the
// test fails.
func startProc(tb testing.TB, bin, name string, env []string, args ...string) *proc {
	tb.Helper()
	p := &proc{tb: tb, name: name, out: &syncbuf.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = sysProcAttr()
	require.NoError(tb, p.cmd.Start(), "start %s", name)
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	tb.Cleanup(func() {
		p.stop()
		if tb.Failed() {
			tb.Logf("%s (pid %d) output, last 6 KiB:\n%s", name, p.cmd.Process.Pid, p.out.Tail(6<<10))
		}
	})
	return p
}

// kill sends SIGKILL to a process — no shutdown, no last words — and waits
// until it is gone.
func (s *stack) kill(name string) {
	s.tb.Helper()
	s.mu.Lock()
	p := s.procs[name]
	s.mu.Unlock()
	require.NoError(s.tb, p.cmd.Process.Kill())
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		s.tb.Fatalf("%s did not die within a minute of SIGKILL", name)
	}
}

// waitReady waits until a process is ready: an API has discovered the
// issuer (it answers 503 to tokens until then), a worker's /readyz is 200
// (PostgreSQL and Temporal answer, the worker polls). A process that exits
// meanwhile fails the test at once.
func (s *stack) waitReady(name string) {
	s.tb.Helper()
	sub, vars := s.process(name)
	s.mu.Lock()
	p := s.procs[name]
	s.mu.Unlock()
	ready := func() error {
		switch sub {
		case "api":
			code, body, err := getJSON("http://" + vars["TOUCHPOINT_API_ADDR"] + "/readyz")
			deps, _ := body["dependencies"].(map[string]any)
			if err == nil && (code != http.StatusOK || deps["issuer"] != "ok") {
				err = fmt.Errorf("/readyz: %d %v", code, body)
			}
			return err
		case "worker":
			code, body, err := getJSON("http://" + vars["TOUCHPOINT_WORKER_ADDR"] + "/readyz")
			if err == nil && code != http.StatusOK {
				err = fmt.Errorf("/readyz: %d %v", code, body)
			}
			return err
		}
		return nil
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := ready()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("%s not ready within 2 minutes: %v", name, err)
		}
		select {
		case <-p.done:
			s.tb.Fatalf("%s exited while starting (%v):\n%s", name, p.err, p.out.Tail(6<<10))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func getJSON(u string) (int, map[string]any, error) { return getJSONWith(http.DefaultClient, u) }

func getJSONWith(c *http.Client, u string) (int, map[string]any, error) {
	res, err := c.Get(u)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return res.StatusCode, nil, err
	}
	return res.StatusCode, body, nil
}

// proc is one running process of the stack.
type proc struct {
	tb   testing.TB
	name string
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan struct{} // closed once it has exited
	err  error         // its exit, once done is closed
}

// stop ends a process at the end of the test: SIGTERM, then SIGKILL if it
// does not stop in time. Processes the test killed are gone already.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.tb.Errorf("%s did not stop within 30 s of SIGINT; killed", p.name)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// client is an API client of the seeded account.
type client struct {
	http  *http.Client
	token string
}

// newClient gets a token from the built-in issuer.
func (s *stack) newClient() *client {
	s.tb.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {s.creds.ClientID},
		"client_secret": {s.creds.ClientSecret}, "audience": {s.apiURL(0)}}
	res, err := http.PostForm(s.authURL+"/oauth/token", form)
	require.NoError(s.tb, err)
	defer res.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	require.Equal(s.tb, http.StatusOK, res.StatusCode)
	require.NoError(s.tb, json.NewDecoder(res.Body).Decode(&tok))
	return &client{
		http:  &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 32}},
		token: tok.AccessToken,
	}
}

// do sends a JSON request and decodes the JSON answer.
func (c *client) do(method, u string, body any, header map[string]string) (int, map[string]any, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil && err != io.EOF {
		return res.StatusCode, nil, fmt.Errorf("%s %s: decode %d answer: %w", method, u, res.StatusCode, err)
	}
	return res.StatusCode, out, nil
}

// immediateEventType creates an event type whose invites go out at once
// to any address, however recently it was invited.
func (s *stack) immediateEventType(c *client, name string) string {
	s.tb.Helper()
	code, et, err := c.do(http.MethodPost, s.apiURL(0)+"/event-types", map[string]any{"name": name}, nil)
	require.NoError(s.tb, err)
	require.Equal(s.tb, http.StatusCreated, code, "%v", et)
	id := et["id"].(string)
	code, list, err := c.do(http.MethodGet, s.apiURL(0)+"/invite-settings?eventTypeId="+id, nil, nil)
	require.NoError(s.tb, err)
	require.Equal(s.tb, http.StatusOK, code, "%v", list)
	for _, it := range list["items"].([]any) {
		ist := it.(map[string]any)["id"].(string)
		code, res, err := c.do(http.MethodPatch, s.apiURL(0)+"/invite-settings/"+ist,
			map[string]any{"delay": "PT0S", "minDaysBetweenInvites": 0}, nil)
		require.NoError(s.tb, err)
		require.Equal(s.tb, http.StatusOK, code, "%v", res)
	}
	return id
}

// event is the body of the i-th event of type typ.
func (s *stack) event(typ string, i int) map[string]any {
	return map[string]any{
		"customer":      map[string]any{"email": fmt.Sprintf("customer-%d@example.com", i), "firstName": "Ann"},
		"type":          typ,
		"channel":       map[string]any{"id": s.creds.ChannelID},
		"transaction":   map[string]any{"reference": fmt.Sprintf("order-%d", i), "date": time.Now().UTC().Format(time.RFC3339)},
		"system":        "shop",
		"systemVersion": "1.0",
	}
}

// mailsByEvent counts the messages the SMTP server took for each event,
// by the event ID in their Message-ID (<evt-…@domain>).
func (s *stack) mailsByEvent() (map[string]int, error) {
	n := map[string]int{}
	for _, m := range s.smtp.Messages() {
		msg, err := m.Parse()
		if err != nil {
			return nil, err
		}
		id := strings.Trim(msg.Header.Get("Message-Id"), "<> ")
		n[strings.SplitN(id, "@", 2)[0]]++
	}
	return n, nil
}
