package main

import (
	"mime"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/smtptest"
)

// TestTemplateChangeBetweenTwoInvites: a shop changes its template
// between two invites of one event type. Each mail, read at the SMTP
// listener, says what the template said when it went out, and each
// attempt names the template's source and version — through the real
// API, outbox, Temporal and worker.
func TestTemplateChangeBetweenTwoInvites(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	c := s.client()
	s.eventType(c, "visit")
	_, types := c.do(http.MethodGet, "/event-types?name=visit", nil)
	et := types["items"].([]any)[0].(map[string]any)["id"].(string)
	put := func(subject string) {
		status, body := c.do(http.MethodPut, "/templates/invite/en?eventTypeId="+et, map[string]any{
			"subject": subject, "heading": "Hi {{firstName}},",
			"body": "thanks for your {{eventType}} (order {{orderReference}}).", "buttonLabel": "Rate your visit"})
		require.Contains(t, []int{http.StatusCreated, http.StatusOK}, status, "%v", body)
	}

	put("How was your visit, {{firstName}}?")
	first := s.accept(c, s.event("visit", "ann@example.com"))
	s.waitStatus(c, "sent", first)
	put("One minute for us, {{firstName}}?")
	second := s.accept(c, s.event("visit", "bo@example.com"))
	s.waitStatus(c, "sent", second)

	byEvent := mailsBySubject(t, s.smtp.Messages())
	assert.Equal(t, "How was your visit, Ann?", byEvent[first].subject)
	assert.Equal(t, "One minute for us, Ann?", byEvent[second].subject)
	for _, ref := range []string{first, second} {
		assert.Contains(t, byEvent[ref].text, "thanks for your visit (order order-1).")
		assert.Contains(t, byEvent[ref].text, "Rate your visit:")
		assert.NotEmpty(t, byEvent[ref].listUnsubscribe, "the layout keeps List-Unsubscribe")
	}
	for ref, version := range map[string]float64{first: 1, second: 2} {
		_, ev := c.do(http.MethodGet, "/events/"+ref, nil)
		history := inviteOf(ev)["attemptHistory"].([]any)
		require.Len(t, history, 1)
		assert.Equal(t, map[string]any{"source": "eventType", "version": version}, history[0].(map[string]any)["template"], ref)
	}
}

// TestTemplateTestSend: a test send goes from the API through the
// starter and Temporal to the worker, and arrives marked as a test; its
// one-click unsubscribe, posted as a mailbox provider posts it, puts the
// address on the account's suppression list by the customer, and a
// second test to it is refused.
func TestTemplateTestSend(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	c := s.client()
	status, body := c.do(http.MethodPut, "/templates/reminder/de", map[string]any{"subject": "Noch eine Minute, {{firstName}}?",
		"heading": "Hallo {{firstName}},", "body": "wie war es bei {{shopName}}?", "buttonLabel": "Bewerten"})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	status, body = c.do(http.MethodPost, "/templates/test-send", map[string]any{"kind": "reminder", "locale": "de", "to": "team@shop.example"})
	require.Equal(t, http.StatusAccepted, status, "%v", body)
	id := body["id"].(string)
	var ts map[string]any
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		_, ts = c.do(http.MethodGet, "/templates/test-sends/"+id, nil)
		assert.Equal(col, "sent", ts["status"])
	}, time.Minute, 50*time.Millisecond)
	assert.Equal(t, "account", ts["source"])
	assert.EqualValues(t, 1, ts["version"])
	msgs := s.smtp.Messages()
	require.Len(t, msgs, 1)
	assert.Equal(t, []string{"team@shop.example"}, msgs[0].To)
	m := mailsBySubject(t, msgs)[id]
	assert.Equal(t, "[Test] Noch eine Minute, Lena?", m.subject)
	assert.Equal(t, "template test", m.test)
	assert.Equal(t, 0, s.count(`SELECT count(*) FROM template_test_sends WHERE address IS NOT NULL`), "the address is forgotten")

	// RFC 8058: the POST a mailbox provider sends to List-Unsubscribe.
	unsub := strings.Trim(m.listUnsubscribe, "<>")
	require.True(t, strings.HasPrefix(unsub, s.cfg.BaseURL+"/unsubscribe?"), unsub)
	res, err := http.Post(unsub, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	status, history := c.do(http.MethodGet, "/suppressions/team@shop.example/history", nil)
	require.Equal(t, http.StatusOK, status, "%v", history)
	require.Len(t, history["items"], 1)
	assert.Equal(t, "unsubscribed", history["items"].([]any)[0].(map[string]any)["reason"])
	assert.Equal(t, "customer", history["items"].([]any)[0].(map[string]any)["by"])
	status, body = c.do(http.MethodPost, "/templates/test-send", map[string]any{"kind": "invite", "locale": "de", "to": "Team@Shop.example"})
	require.Equal(t, http.StatusUnprocessableEntity, status, "%v", body)
	assert.Contains(t, body["detail"], "suppressed")
}

type readMail struct{ subject, text, listUnsubscribe, test string }

// mailsBySubject reads the messages by the id in their Message-ID (the
// event's, or the test send's).
func mailsBySubject(t *testing.T, msgs []smtptest.Message) map[string]readMail {
	t.Helper()
	out := map[string]readMail{}
	for _, raw := range msgs {
		m, err := raw.Parse()
		require.NoError(t, err)
		subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
		require.NoError(t, err)
		id := strings.SplitN(strings.Trim(m.Header.Get("Message-Id"), "<> "), "@", 2)[0]
		out[id] = readMail{subject: subject, text: strings.ReplaceAll(textPart(t, m), "\r\n", "\n"),
			listUnsubscribe: m.Header.Get("List-Unsubscribe"), test: m.Header.Get("X-Touchpoint-Test")}
	}
	return out
}
