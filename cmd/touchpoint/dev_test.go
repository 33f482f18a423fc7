package main

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/internal/freeport"
	"github.com/touchpoint/touchpoint/internal/syncbuf"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/webform"
	"github.com/touchpoint/touchpoint/mail"
)

// freeAddr returns a 127.0.0.1 address with a free port, kept from other
// picks until the process the test starts binds it (freeport).
func freeAddr(t *testing.T) string {
	t.Helper()
	addrs, err := freeport.Addrs(1)
	require.NoError(t, err)
	return addrs[0]
}

// reserveAgain keeps the addresses a stopped or killed child listened on
// (those of vars that it serves) from anyone's ":0" pick until its restart
// binds them again (freeport).
func reserveAgain(t *testing.T, vars map[string]string) {
	t.Helper()
	for _, k := range []string{"TEMPORAL_ADDRESS", "TOUCHPOINT_TEMPORAL_UI_ADDR", "TOUCHPOINT_METRICS_ADDR",
		"TOUCHPOINT_WORKER_ADDR", "TOUCHPOINT_BASE_URL", "TOUCHPOINT_AUTH_URL"} {
		v := vars[k]
		if u, err := url.Parse(v); err == nil && u.Host != "" {
			v = u.Host
		}
		if v != "" {
			require.NoError(t, freeport.Reserve(v), "%s: the port was taken while the child was down", k)
		}
	}
}

// devRun is one `touchpoint dev` process: the real binary, as a newcomer
// runs it. logs are its JSON logs (stderr), apart from the banner.
type devRun struct {
	p    *process
	logs *syncbuf.Buffer
}

func startDev(t *testing.T, vars map[string]string) *devRun {
	t.Helper()
	p := startChild(t, childEnv(vars), "dev")
	return &devRun{p: p, logs: p.stderr}
}

// stop is Ctrl-C: every part must stop cleanly and the process exit 0.
func (r *devRun) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, r.p.cmd.Process.Signal(os.Interrupt))
	r.p.waitExited()
	assert.Equal(t, 0, r.p.cmd.ProcessState.ExitCode(), "dev must stop cleanly; output:\n%s", r.logs)
}

var exportLine = regexp.MustCompile(`export CLIENT_ID=(\S+) CLIENT_SECRET=(\S+) CHANNEL_ID=(\S+)`)

// credentials waits for the banner and returns what it printed. A dev
// that stops first fails the test at once, with its output.
func (r *devRun) credentials(t *testing.T) (clientID, secret, channelID string) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		if m := exportLine.FindStringSubmatch(r.p.out.String()); m != nil {
			return m[1], m[2], m[3]
		}
		select {
		case <-r.p.done:
			t.Fatalf("dev stopped: %v; output:\n%s", r.p.cmd.ProcessState, r.logs)
		case <-deadline:
			t.Fatalf("dev printed no credentials within 2 minutes; output:\n%s", r.logs)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// client is a tiny API client for the walk-through.
type apiClient struct {
	t     *testing.T
	api   string
	token string
}

func token(t *testing.T, authURL, audience, clientID, secret string) (string, int) {
	t.Helper()
	res, err := http.PostForm(authURL+"/oauth/token", url.Values{
		"client_id": {clientID}, "client_secret": {secret}, "grant_type": {"client_credentials"}, "audience": {audience},
	})
	require.NoError(t, err)
	defer res.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(res.Body).Decode(&body)
	return body.AccessToken, res.StatusCode
}

func (c *apiClient) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	return c.doWith(method, path, body)
}

// doWith sends a request with extra headers given as name, value pairs.
func (c *apiClient) doWith(method, path string, body any, headers ...string) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(c.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.api+path, rd)
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	var out map[string]any
	raw, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	if len(raw) > 0 {
		require.NoError(c.t, json.Unmarshal(raw, &out), "%s", raw)
	}
	return res.StatusCode, out
}

// TestDevQuickStart follows the README: `touchpoint dev` on a database
// that does not exist yet, then token → event type → invite settings of
// the default channel → patch one → an event → its invite in the .eml
// outbox → the event read back as sent; then Ctrl-C and a restart that
// keeps the data and rotates the dev secret.
func TestDevQuickStart(t *testing.T) {
	dbURL := testdb.NewURL(t)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	u.Path += "_dev" // a database that does not exist: dev creates it
	t.Cleanup(func() { dropDatabase(t, strings.TrimPrefix(u.Path, "/")) })

	apiAddr, authAddr := freeAddr(t), freeAddr(t)
	dataDir := t.TempDir()
	vars := map[string]string{
		"DATABASE_URL":                u.String(),
		"TEMPORAL_ADDRESS":            freeAddr(t),
		"TOUCHPOINT_TEMPORAL_UI_ADDR": freeAddr(t),
		"TOUCHPOINT_BASE_URL":         "http://" + apiAddr,
		"TOUCHPOINT_AUTH_URL":         "http://" + authAddr,
		"TOUCHPOINT_DATA_DIR":         dataDir,
		"TOUCHPOINT_METRICS_ADDR":     freeAddr(t),
		"TOUCHPOINT_WORKER_ADDR":      freeAddr(t),
	}
	api, authURL := vars["TOUCHPOINT_BASE_URL"], vars["TOUCHPOINT_AUTH_URL"]

	dev := startDev(t, vars)
	clientID, secret, channelID := dev.credentials(t)

	// dev's worker serves what TOUCHPOINT_WORKER_ADDR promises, as
	// `touchpoint worker` does: its probes, and the metrics with the
	// overdue invites (also on dev's metrics address).
	get := func(url string) (int, string) {
		res, err := http.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	worker := "http://" + vars["TOUCHPOINT_WORKER_ADDR"]
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		status, body := get(worker + "/readyz")
		assert.Equal(col, http.StatusOK, status, "%s", body)
	}, time.Minute, 100*time.Millisecond, "the worker polls: logs:\n%s", dev.logs)
	status, _ := get(worker + "/healthz")
	assert.Equal(t, http.StatusOK, status)
	for _, metricsURL := range []string{worker + "/metrics", "http://" + vars["TOUCHPOINT_METRICS_ADDR"] + "/metrics"} {
		status, body := get(metricsURL)
		require.Equal(t, http.StatusOK, status, metricsURL)
		assert.Regexp(t, `(?m)^touchpoint_invites_overdue 0$`, body, metricsURL)
	}
	status, _ = get("http://" + vars["TOUCHPOINT_METRICS_ADDR"] + "/debug/pprof/")
	assert.Equal(t, http.StatusNotFound, status, "no profiles without TOUCHPOINT_PPROF")
	tok, status := token(t, authURL, api, clientID, secret)
	require.Equal(t, http.StatusOK, status)
	c := &apiClient{t: t, api: api, token: tok}

	status, et := c.do(http.MethodPost, "/event-types", map[string]any{"active": true, "name": "checkout"})
	require.Equal(t, http.StatusCreated, status, "%v", et)
	status, list := c.do(http.MethodGet, "/invite-settings?channelId="+channelID, nil)
	require.Equal(t, http.StatusOK, status)
	settings := list["items"].([]any)
	require.Len(t, settings, 1)
	setting := settings[0].(map[string]any)
	assert.Equal(t, et["id"], setting["eventTypeId"])
	assert.Equal(t, "PT10S", setting["delay"], "dev's default delay")
	status, patched := c.do(http.MethodPatch, "/invite-settings/"+setting["id"].(string), map[string]any{"delay": "PT0S"})
	require.Equal(t, http.StatusOK, status, "%v", patched)

	status, accepted := c.do(http.MethodPost, "/events", map[string]any{
		"customer":      map[string]any{"email": "ann@example.com", "firstName": "Ann"},
		"type":          "checkout",
		"channel":       map[string]any{"id": channelID},
		"transaction":   map[string]any{"reference": "order-1", "date": time.Now().UTC().Format(time.RFC3339)},
		"system":        "shop",
		"systemVersion": "1.0",
	})
	require.Equal(t, http.StatusAccepted, status, "%v", accepted)
	ref := accepted["EventRef"].(string)

	require.EventuallyWithT(t, func(col *assert.CollectT) {
		_, ev := c.do(http.MethodGet, "/events/"+ref, nil)
		assert.Equal(col, "sent", inviteOf(ev)["status"])
	}, time.Minute, 100*time.Millisecond, "logs:\n%s", dev.logs)
	mails, err := filepath.Glob(filepath.Join(dataDir, "outbox", "*.eml"))
	require.NoError(t, err)
	require.Len(t, mails, 1)
	eml, err := os.ReadFile(mails[0])
	require.NoError(t, err)
	assert.Contains(t, string(eml), "ann@example.com")

	// The banner names the console; its owner signs in with the link
	// that lands in the outbox, as every mail does.
	assert.Contains(t, dev.p.out.String(), "http://"+apiAddr+"/console/")
	assert.Contains(t, dev.p.out.String(), devOwner)
	signInToConsole(t, "http://"+apiAddr, filepath.Join(dataDir, "outbox"))

	// Secrets and tokens never reach the logs, and customer emails only
	// masked; a wrong secret and a forged token are tried too.
	_, status = token(t, authURL, api, clientID, "wrong-"+secret)
	assert.Equal(t, http.StatusUnauthorized, status)
	forged := tok[:len(tok)-8] + "AAAAAAAA"
	status, _ = (&apiClient{t: t, api: api, token: forged}).do(http.MethodGet, "/events", nil)
	assert.Equal(t, http.StatusUnauthorized, status)
	secretKey, err := os.ReadFile(filepath.Join(dataDir, "secret.key"))
	require.NoError(t, err)
	logs := dev.logs.String()
	assert.Contains(t, logs, ref, "the logs do speak of the event")
	assert.Contains(t, logs, mail.MaskEmail("ann@example.com"), "and of its recipient, masked")
	for name, secretValue := range map[string]string{
		"client secret": secret, "access token": tok, "token signature": tok[strings.LastIndex(tok, ".")+1:],
		"forged token": forged, "secret key": strings.TrimSpace(string(secretKey)), "customer email": "ann@example.com",
	} {
		assert.NotContains(t, logs, secretValue, "the %s is in the logs", name)
	}

	dev.stop(t)
	reserveAgain(t, vars)

	// A restart keeps the data and prints a new secret; the old one is void.
	dev = startDev(t, vars)
	clientID2, secret2, channelID2 := dev.credentials(t)
	assert.Equal(t, clientID, clientID2)
	assert.Equal(t, channelID, channelID2)
	assert.NotEqual(t, secret, secret2)
	_, status = token(t, authURL, api, clientID, secret)
	assert.Equal(t, http.StatusUnauthorized, status)
	tok, status = token(t, authURL, api, clientID, secret2)
	require.Equal(t, http.StatusOK, status)
	c.token = tok
	status, got := c.do(http.MethodGet, "/events/"+ref, nil)
	require.Equal(t, http.StatusOK, status)
	inv := got["invite"].(map[string]any)
	assert.Equal(t, "sent", inv["status"])
	// The members the README's step 7 shows.
	assert.ElementsMatch(t, []string{"status", "reason", "medium", "scheduledFor", "sentAt", "openedAt", "attempts",
		"lastError", "delivery", "reminder", "attemptHistory"}, slices.Collect(maps.Keys(inv)))
	history := inv["attemptHistory"].([]any)
	require.Len(t, history, 1)
	assert.ElementsMatch(t, []string{"n", "kind", "medium", "startedAt", "finishedAt", "outcome", "detail", "template",
		"providerEvents"}, slices.Collect(maps.Keys(history[0].(map[string]any))))
	assert.Equal(t, map[string]any{"source": "builtin", "version": nil}, history[0].(map[string]any)["template"])
}

func dropDatabase(t *testing.T, name string) {
	db, err := sqlx.Open("postgres", testdb.ServerURL())
	if err != nil {
		t.Errorf("drop %s: %v", name, err)
		return
	}
	defer db.Close()
	if _, err := db.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
		t.Errorf("drop %s: %v", name, err)
	}
}

// signInToConsole signs the dev owner in to the console at base, reading
// the sign-in link from the .eml outbox.
func signInToConsole(t *testing.T, base, outbox string) {
	t.Helper()
	b := webform.New(t)
	p := b.Get(base + "/console/")
	for i := 0; p.StatusCode == http.StatusSeeOther && i < 5; i++ {
		p = b.Follow(p)
	}
	require.Equal(t, http.StatusOK, p.StatusCode, p.Body)
	b.Submit(p, p.Form(t, authserver.AuthorizePath), map[string]string{"email": devOwner})
	var links []string
	require.Eventually(t, func() bool {
		links, _ = filepath.Glob(filepath.Join(outbox, "lnk-*.eml"))
		return len(links) == 1
	}, time.Minute, 50*time.Millisecond, "the sign-in mail in the outbox")
	raw, err := os.ReadFile(links[0])
	require.NoError(t, err)
	confirm := b.Get(signInLink.FindString(webform.MailText(t, raw)))
	require.Equal(t, http.StatusOK, confirm.StatusCode, confirm.Body)
	p = b.Submit(confirm, confirm.Form(t, authserver.SignInPath), nil)
	for i := 0; p.StatusCode == http.StatusSeeOther && i < 5; i++ {
		p = b.Follow(p)
	}
	require.Equal(t, http.StatusOK, p.StatusCode, p.Body)
	assert.Equal(t, base+"/console/", p.URL.String())
	assert.Contains(t, p.Body, devOwner, "the console says who is signed in")
}
