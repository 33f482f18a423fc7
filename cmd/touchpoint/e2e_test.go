package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An accepted event becomes exactly one mail over SMTP, and the event
// reads back as sent.
func TestEventToMailOverSMTP(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	c := s.client()
	s.eventType(c, "checkout")
	ref := s.accept(c, s.event("checkout", "ann@example.com"))
	s.waitStatus(c, "sent", ref)
	assert.Equal(t, "Completed", s.waitClosed(ref))

	msgs := s.smtp.Messages()
	require.Len(t, msgs, 1, "exactly one mail")
	assert.Equal(t, []string{"ann@example.com"}, msgs[0].To)
	parsed, err := msgs[0].Parse()
	require.NoError(t, err)
	assert.Equal(t, "<"+ref+"@touchpoint.localhost>", parsed.Header.Get("Message-Id"), "stable Message-ID from the event id")

	_, ev := c.do(http.MethodGet, "/events/"+ref, nil)
	invite := inviteOf(ev)
	assert.EqualValues(t, 1, invite["attempts"])
	assert.NotNil(t, invite["sentAt"])
	assert.Equal(t, 0, s.count(`SELECT count(*) FROM outbox WHERE done_at IS NULL`), "the start order is done")
}

// While Temporal is unreachable every event is still accepted (pending);
// when it is back, every workflow starts and every invite goes out once.
func TestTemporalDownWhileEventsArrive(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	c := s.client()
	s.eventType(c, "checkout")

	s.tp.Cut()
	// A burst from eight clients at once: not one is turned away.
	refs := make([]string, 60)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < len(refs); i += 8 {
				status, res := c.do(http.MethodPost, "/events", s.event("checkout", fmt.Sprintf("user%d@example.com", i)))
				if assert.Equal(t, http.StatusAccepted, status, "%v", res) {
					refs[i] = res["EventRef"].(string)
				}
			}
		})
	}
	wg.Wait()
	require.NotContains(t, refs, "")
	_, ev := c.do(http.MethodGet, "/events/"+refs[0], nil)
	assert.Equal(t, "pending", inviteOf(ev)["status"])
	// /readyz answers from a cache of at most a second.
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		status, ready := c.do(http.MethodGet, "/readyz", nil)
		assert.Equal(col, http.StatusOK, status, "a Temporal outage degrades, it does not drain the API")
		assert.Equal(col, "degraded", ready["status"])
	}, 10*time.Second, 50*time.Millisecond)

	require.NoError(t, s.tp.Restore())
	s.waitStatus(c, "sent", refs...)
	for _, ref := range refs {
		s.waitClosed(ref)
	}
	mails := s.mailsByEvent()
	assert.Len(t, mails, len(refs))
	for _, ref := range refs {
		assert.Equal(t, 1, mails[ref], ref)
	}
}

// With PostgreSQL unreachable the API answers 503 with Retry-After and
// writes nothing; afterwards it accepts again.
func TestPostgresDownAnswers503(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	c := s.client()
	s.eventType(c, "checkout")

	s.pg.Cut()
	req, err := http.NewRequest(http.MethodPost, s.cfg.BaseURL+"/events", jsonBody(t, s.event("checkout", "ann@example.com")))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	require.EventuallyWithT(t, func(col *assert.CollectT) { // /readyz answers from a cache of at most a second
		status, _ := c.do(http.MethodGet, "/readyz", nil)
		assert.Equal(col, http.StatusServiceUnavailable, status)
	}, 10*time.Second, 50*time.Millisecond)
	assert.Equal(t, 0, s.count(`SELECT count(*) FROM events`), "nothing half-written")
	assert.Equal(t, 0, s.count(`SELECT count(*) FROM outbox`))

	require.NoError(t, s.pg.Restore())
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		status, _ := c.do(http.MethodGet, "/readyz", nil)
		assert.Equal(col, http.StatusOK, status)
	}, time.Minute, 50*time.Millisecond)
	ref := s.accept(c, s.event("checkout", "ann@example.com"))
	s.waitStatus(c, "sent", ref)
}

// An SMTP outage delays invites; when the server is back they go out,
// none twice.
func TestSMTPDownThenUp(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	c := s.client()
	s.eventType(c, "checkout")

	s.smtp.Stop()
	refs := []string{s.accept(c, s.event("checkout", "a@example.com")), s.accept(c, s.event("checkout", "b@example.com"))}
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		for _, ref := range refs {
			_, ev := c.do(http.MethodGet, "/events/"+ref, nil)
			invite := inviteOf(ev)
			assert.Equal(col, "scheduled", invite["status"])
			assert.NotNil(col, invite["lastError"], "the failed attempt is recorded")
		}
	}, time.Minute, 50*time.Millisecond)

	require.NoError(t, s.smtp.Restart())
	s.waitStatus(c, "sent", refs...)
	for _, ref := range refs {
		s.waitClosed(ref)
	}
	mails := s.mailsByEvent()
	for _, ref := range refs {
		assert.Equal(t, 1, mails[ref], ref)
	}
}

// The process's metrics count what happened: requests by route, accepted
// events, workflow starts, token checks, the outbox backlog, invites by
// outcome (from the workflow) and the Temporal SDK's own metrics.
func TestMetrics(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	c := s.client()
	s.eventType(c, "checkout")
	ref := s.accept(c, s.event("checkout", "ann@example.com"))
	s.waitStatus(c, "sent", ref)
	s.waitClosed(ref)

	srv := httptest.NewServer(s.metrics.Handler())
	defer srv.Close()
	scrape := func() string {
		res, err := http.Get(srv.URL)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return string(b)
	}
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		m := scrape()
		sent := grepLines(grepLines(m, "touchpoint_invites{"), `status="sent"`)
		assert.True(col, strings.HasSuffix(sent, " 1"), "the workflow counts its sent invite: %q", sent)
		for _, want := range []string{
			`touchpoint_events_accepted_total 1`,
			`touchpoint_http_requests_total{method="POST",route="/events",server="api",status="202"} 1`,
			`touchpoint_http_requests_total{method="POST",route="/oauth/token",server="auth",status="200"} 1`,
			`touchpoint_workflow_starts_total{kind="start",result="started"} 1`,
			`touchpoint_token_verifications_total{result="ok"}`,
			`touchpoint_outbox_pending 0`,
			`temporal_request`,
			`touchpoint_http_request_duration_seconds_bucket{method="POST",route="/events",server="api",le="+Inf"} 1`,
		} {
			if !strings.Contains(m, want) {
				col.Errorf("missing %s", want)
			}
		}
	}, 30*time.Second, 200*time.Millisecond)
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
