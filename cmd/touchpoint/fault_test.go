package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/internal/testdb"
)

// PostgreSQL cut off in the middle of a burst of accepts: every 202 is an
// event with its start order, nothing else is half-written, and clients
// that retry their failed requests with the same Idempotency-Key end with
// exactly one event each.
func TestPostgresCutDuringBurst(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	c := s.client()
	s.eventType(c, "checkout")

	const n, workers = 120, 8
	statuses := make([]int, n)
	refs := make([]string, n)
	bodies := make([]map[string]any, n) // a retry sends the very same request
	for i := range bodies {
		bodies[i] = s.event("checkout", fmt.Sprintf("c%d@example.com", i))
	}
	post := func(i int) {
		key := fmt.Sprintf("burst-%d", i)
		status, body := c.doWith(http.MethodPost, "/events", bodies[i], "Idempotency-Key", key)
		statuses[i] = status
		if status == http.StatusAccepted {
			refs[i] = body["EventRef"].(string)
		}
	}
	var done sync.WaitGroup
	var mu sync.Mutex
	answered := 0
	cut := make(chan struct{})
	next := make(chan int)
	for range workers {
		done.Go(func() {
			for i := range next {
				post(i)
				mu.Lock()
				if answered++; answered == n/3 {
					close(cut)
				}
				mu.Unlock()
			}
		})
	}
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	<-cut
	s.pg.Cut() // the rest of the burst meets a dead database
	done.Wait()
	require.NoError(t, s.pg.Restore())

	accepted := 0
	for i, status := range statuses {
		switch status {
		case http.StatusAccepted:
			accepted++
		case http.StatusServiceUnavailable:
		default:
			t.Errorf("request %d: status %d, want 202 or 503", i, status)
		}
	}
	require.Less(t, accepted, n, "the cut must have hit some requests")
	for i, ref := range refs {
		if ref != "" {
			assert.Equal(t, 1, s.count(`SELECT count(*) FROM events WHERE id = $1`, ref), "a 202'd event is stored (request %d)", i)
		}
	}
	assert.Equal(t, 0, s.count(`SELECT count(*) FROM events e WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = e.id)`),
		"no event without its start order")

	// The clients retry what failed, with the same keys.
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		for i := range n {
			if statuses[i] != http.StatusAccepted {
				post(i)
			}
			assert.Equal(col, http.StatusAccepted, statuses[i], "request %d", i)
		}
	}, time.Minute, 100*time.Millisecond)
	assert.Equal(t, n, s.count(`SELECT count(*) FROM events`), "one event per request, none lost, none twice")
	assert.Equal(t, n, s.count(`SELECT count(*) FROM outbox`))
	assert.Equal(t, n, s.count(`SELECT count(DISTINCT event_id) FROM idempotency_keys`))
}

// kill -9 of `touchpoint dev` with invites waiting: after a restart on the
// same data dir every invite is sent, exactly once. The mail server is
// down until the kill, so no invite can go out before it however slow the
// machine: each waits for its send time or for its next attempt.
func TestDevKilledWithPendingInvites(t *testing.T) {
	t.Parallel()
	smtp := smtptest.Start(t, smtptest.Options{})
	apiAddr, authAddr := freeAddr(t), freeAddr(t)
	vars := map[string]string{
		"DATABASE_URL":                testdb.NewURL(t),
		"TEMPORAL_ADDRESS":            freeAddr(t),
		"TOUCHPOINT_TEMPORAL_UI_ADDR": freeAddr(t),
		"TOUCHPOINT_METRICS_ADDR":     freeAddr(t),
		"TOUCHPOINT_BASE_URL":         "http://" + apiAddr,
		"TOUCHPOINT_AUTH_URL":         "http://" + authAddr,
		"TOUCHPOINT_DATA_DIR":         t.TempDir(),
		"TOUCHPOINT_SMTP_URL":         smtp.URL(),
		"TOUCHPOINT_RATE_LIMIT":       "100000", // the test polls hard
		"TOUCHPOINT_RATE_BURST":       "100000",
		// Attempts while the mail server is down come again soon.
		"TOUCHPOINT_SEND_RETRY_INITIAL": "100ms",
		"TOUCHPOINT_SEND_RETRY_MAX":     "1s",
	}
	api, authURL := vars["TOUCHPOINT_BASE_URL"], vars["TOUCHPOINT_AUTH_URL"]
	login := func(p *process) *apiClient {
		var m []string
		require.EventuallyWithT(t, func(col *assert.CollectT) {
			m = exportLine.FindStringSubmatch(p.out.String())
			assert.NotNil(col, m)
		}, 2*time.Minute, 50*time.Millisecond)
		require.EventuallyWithT(t, func(col *assert.CollectT) {
			tok, status := token(t, authURL, api, m[1], m[2])
			if assert.Equal(col, http.StatusOK, status) {
				c := &apiClient{t: t, api: api, token: tok}
				status, _ := c.do(http.MethodGet, "/event-types", nil)
				assert.Equal(col, http.StatusOK, status)
			}
		}, time.Minute, 50*time.Millisecond)
		tok, _ := token(t, authURL, api, m[1], m[2])
		return &apiClient{t: t, api: api, token: tok}
	}

	dev := startChild(t, childEnv(vars), "dev")
	c := login(dev)
	m := exportLine.FindStringSubmatch(dev.out.String())
	s := &stack{t: t, creds: devCredentials{ChannelID: m[3]}}
	s.eventType(c, "checkout")
	// Invites wait 4 s, most of them still when dev is killed; any that
	// comes due meets the mail server down.
	smtp.Stop()
	status, list := c.do(http.MethodGet, "/invite-settings?channelId="+m[3], nil)
	require.Equal(t, http.StatusOK, status)
	ist := list["items"].([]any)[0].(map[string]any)["id"].(string)
	status, _ = c.do(http.MethodPatch, "/invite-settings/"+ist, map[string]any{"delay": "PT4S"})
	require.Equal(t, http.StatusOK, status)
	var refs []string
	for i := range 20 {
		refs = append(refs, s.accept(c, s.event("checkout", fmt.Sprintf("c%d@example.com", i))))
	}
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		for _, ref := range refs {
			_, ev := c.do(http.MethodGet, "/events/"+ref, nil)
			assert.Equal(col, "scheduled", inviteOf(ev)["status"], ref)
		}
	}, time.Minute, 50*time.Millisecond, "every workflow started and waiting")
	dev.kill()
	require.Empty(t, smtp.Messages(), "killed before the first send")
	require.NoError(t, smtp.Restart())
	reserveAgain(t, vars)

	dev = startChild(t, childEnv(vars), "dev")
	c = login(dev)
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		for _, ref := range refs {
			_, ev := c.do(http.MethodGet, "/events/"+ref, nil)
			assert.Equal(col, "sent", inviteOf(ev)["status"], ref)
		}
	}, time.Minute, 100*time.Millisecond)
	perEvent := map[string]int{}
	for _, msg := range smtp.Messages() {
		parsed, err := msg.Parse()
		require.NoError(t, err)
		perEvent[parsed.Header.Get("Message-Id")]++
	}
	assert.Len(t, perEvent, len(refs))
	for id, n := range perEvent {
		assert.Equal(t, 1, n, id)
	}
}

// SIGTERM stops `touchpoint dev` cleanly: every part shuts down and the
// process exits 0.
func TestDevStopsOnSIGTERM(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		"DATABASE_URL":                testdb.NewURL(t),
		"TEMPORAL_ADDRESS":            freeAddr(t),
		"TOUCHPOINT_TEMPORAL_UI_ADDR": freeAddr(t),
		"TOUCHPOINT_METRICS_ADDR":     freeAddr(t),
		"TOUCHPOINT_BASE_URL":         "http://" + freeAddr(t),
		"TOUCHPOINT_AUTH_URL":         "http://" + freeAddr(t),
		"TOUCHPOINT_DATA_DIR":         t.TempDir(),
	}
	dev := startChild(t, childEnv(vars), "dev")
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		assert.Contains(col, dev.out.String(), `"msg":"worker started"`)
	}, 2*time.Minute, 50*time.Millisecond)
	require.NoError(t, dev.cmd.Process.Signal(syscall.SIGTERM))
	dev.waitExited()
	assert.Equal(t, 0, dev.cmd.ProcessState.ExitCode(), "output:\n%s", dev.out)
	for _, part := range []string{`"server":"api"`, `"server":"auth"`, `"server":"worker"`, `"server":"metrics"`} {
		assert.Regexp(t, `"msg":"stopped"[^\n]*`+regexp.QuoteMeta(part), dev.out.String(), "%s stopped", part)
	}
}

// kill -9 of `touchpoint api` while it commits groups of accepts under
// load, every request with an Idempotency-Key: no client has a 202
// without its event, and no event is stored but a client's — each client
// that got no answer sends its request again, once the API is back, and
// ends with one event, the one stored if it was; a client that had its
// 202 gets the same EventRef again. The start orders, the daily event
// counts and the funnel hold exactly the events.
func TestAPIKilledWhileCommittingGroups(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	c := s.client()
	s.eventType(c, "checkout")
	addr := freeAddr(t)
	env := s.processEnv()
	env = append(env, "TOUCHPOINT_API_ADDR="+addr, "TOUCHPOINT_RATE_LIMIT=100000", "TOUCHPOINT_RATE_BURST=100000",
		"TOUCHPOINT_TOKEN_USE_FLUSH_INTERVAL=100ms", "TOUCHPOINT_DEFAULT_INVITE_DELAY=PT0S")
	startAPI := func() *process {
		p := startChild(t, env, "api")
		require.EventuallyWithT(t, func(col *assert.CollectT) {
			res, err := http.Get("http://" + addr + "/readyz")
			if assert.NoError(col, err) {
				res.Body.Close()
				assert.Equal(col, http.StatusOK, res.StatusCode)
			}
		}, time.Minute, 20*time.Millisecond)
		return p
	}
	api := startAPI()

	const n, clients = 600, 32
	bodies := make([][]byte, n)
	for i := range bodies {
		var err error
		bodies[i], err = json.Marshal(s.event("checkout", fmt.Sprintf("c%d@example.com", i)))
		require.NoError(t, err)
	}
	httpc := &http.Client{Timeout: 30 * time.Second}
	// post sends request i (the very same body and key every time) and
	// returns its status, or 0 without an answer, and its EventRef.
	post := func(i int) (int, string) {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/events", bytes.NewReader(bodies[i]))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", fmt.Sprintf("order-%d", i))
		res, err := httpc.Do(req)
		if err != nil {
			return 0, ""
		}
		defer res.Body.Close()
		var body struct{ EventRef string }
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			return 0, "" // cut off mid-answer
		}
		return res.StatusCode, body.EventRef
	}

	statuses, refs := make([]int, n), make([]string, n)
	var mu sync.Mutex
	answered := 0
	killed := make(chan struct{})
	next := make(chan int)
	var done sync.WaitGroup
	for range clients {
		done.Go(func() {
			for i := range next {
				status, ref := post(i)
				mu.Lock()
				statuses[i], refs[i] = status, ref
				if answered++; answered == n/3 {
					api.kill() // mid-burst: groups are being written and committed
					close(killed)
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	done.Wait()
	<-killed

	var got, lost int
	for i, status := range statuses {
		switch status {
		case http.StatusAccepted:
			got++
			assert.Equal(t, 1, s.count(`SELECT count(*) FROM events WHERE id = $1`, refs[i]), "request %d has its 202 and its event", i)
		case 0:
			lost++
		default:
			t.Errorf("request %d: status %d", i, status)
		}
	}
	require.Positive(t, lost, "the kill cut some requests off")
	require.Positive(t, got)
	stored := s.count(`SELECT count(*) FROM events`)
	assert.Equal(t, stored, s.count(`SELECT count(*) FROM idempotency_keys k JOIN events e ON e.id = k.event_id`),
		"every stored event is a client's, by its key")
	t.Logf("%d answered 202, %d cut off, %d events stored before the restart", got, lost, stored)

	api = startAPI()
	for i := range n {
		status, ref := post(i)
		require.Equal(t, http.StatusAccepted, status, "request %d sent again", i)
		if statuses[i] == http.StatusAccepted {
			assert.Equal(t, refs[i], ref, "request %d: the same EventRef again", i)
		}
		refs[i] = ref
	}
	assert.Equal(t, n, s.count(`SELECT count(*) FROM events`), "one event per request, none lost, none twice")
	assert.Equal(t, n, s.count(`SELECT count(DISTINCT event_id) FROM outbox`), "each with its start order")
	for i, ref := range refs {
		assert.Equal(t, 1, s.count(`SELECT count(*) FROM idempotency_keys WHERE key = $1 AND event_id = $2`, fmt.Sprintf("order-%d", i), ref),
			"request %d's key holds its event", i)
	}
	assert.Equal(t, n, s.count(`SELECT COALESCE(sum(events), 0) FROM account_daily_events`), "the daily quota counted each event once")
	assert.Equal(t, n, s.count(`SELECT COALESCE(sum(accepted), 0) FROM
		(SELECT accepted FROM invite_rollups WHERE event_type_id = '' UNION ALL SELECT accepted FROM invite_rollup_changes) x`),
		"the funnel counted each event once")
}
