package main

import (
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
