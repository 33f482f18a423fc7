package main

import (
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/browsertest"
)

// mailOf returns the parsed mail the SMTP server got with the Message-ID
// <id@…>, waiting for it.
func (s *stack) mailOf(id string) *mail.Message {
	s.t.Helper()
	var found *mail.Message
	require.EventuallyWithT(s.t, func(col *assert.CollectT) {
		for _, m := range s.smtp.Messages() {
			msg, err := m.Parse()
			require.NoError(s.t, err)
			if strings.HasPrefix(msg.Header.Get("Message-Id"), "<"+id+"@") {
				found = msg
			}
		}
		assert.NotNil(col, found, "no mail %s yet", id)
	}, time.Minute, 50*time.Millisecond)
	return found
}

var feedbackLinkRE = regexp.MustCompile(`http://\S+/feedback\?\S+`)

// textPart is the decoded text/plain part of a mail.
func textPart(t *testing.T, m *mail.Message) string {
	t.Helper()
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	require.NoError(t, err)
	r := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := r.NextPart() // decodes quoted-printable
		require.NoError(t, err, "no text/plain part")
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain") {
			b, err := io.ReadAll(p)
			require.NoError(t, err)
			return string(b)
		}
	}
}

// feedbackLink is the link of an invite's text part, as the customer
// clicks it.
func feedbackLink(t *testing.T, m *mail.Message) string {
	t.Helper()
	text := textPart(t, m)
	link := feedbackLinkRE.FindString(text)
	require.NotEmpty(t, link, "the invite has a feedback link:\n%s", text)
	return link
}

// TestCustomerLoopInABrowser is the customer's side of the loop in a real
// browser: the invite's link from the mail server opens the feedback page,
// the rating is chosen with the keyboard, a comment typed, the form sent;
// the thank-you page shows and the review is in GET /reviews. Then the
// mail's one-click unsubscribe link, opened in the browser, asks to
// confirm, and its button puts the address on the suppression list. At a
// phone's width and a desktop's; screenshots go to the test's temp dir.
func TestCustomerLoopInABrowser(t *testing.T) {
	b := browsertest.Start(t)
	s := newStack(t, nil)
	c := s.client()
	s.eventType(c, "checkout")
	status, _ := c.do(http.MethodPatch, "/account", map[string]any{"displayName": "Nordlicht Outdoor"})
	require.Equal(t, http.StatusOK, status)

	for i, width := range []int64{360, 1280} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			email := fmt.Sprintf("customer%d@example.com", i)
			ev := s.event("checkout", email)
			ev["defaultLocale"] = "de_DE"
			ev["products"] = []any{map[string]any{"name": "Wanderschuh Trail"}}
			ref := s.accept(c, ev)
			s.waitStatus(c, "sent", ref)
			m := s.mailOf(ref)

			tab := b.Tab(t)
			resp, err := chromedp.RunResponse(tab, chromedp.EmulateViewport(width, 900), chromedp.Navigate(feedbackLink(t, m)))
			require.NoError(t, err)
			assert.EqualValues(t, http.StatusOK, resp.Status)
			assert.Contains(t, browsertest.Eval[string](t, tab, `document.querySelector('h1').innerText`), "Nordlicht Outdoor")
			browsertest.Capture(t, tab, fmt.Sprintf("feedback-%d", width))

			// Tab to the rating, Space chooses 1, three arrows make it 4.
			require.NoError(t, chromedp.Do(tab, chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(" "),
				chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight)))
			assert.Equal(t, "4", browsertest.Eval[string](t, tab, `document.querySelector('input[name=rating]:checked').value`))
			const comment = `Passt gut & kam schnell. "<b>"`
			require.NoError(t, chromedp.Do(tab, chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(comment)))
			// Past the optional product rating, its comment and the consent
			// to be named, Tab reaches the button.
			var stops []string
			for range 6 {
				require.NoError(t, chromedp.Do(tab, chromedp.KeyEvent(kb.Tab)))
				stops = append(stops, browsertest.Eval[string](t, tab, `document.activeElement.tagName + ' ' + (document.activeElement.name || '')`))
				if strings.HasPrefix(stops[len(stops)-1], "BUTTON") {
					break
				}
			}
			assert.True(t, strings.HasPrefix(stops[len(stops)-1], "BUTTON"), "Tab reaches the button: %v", stops)
			resp, err = chromedp.RunResponse(tab, browsertest.Enter())
			require.NoError(t, err)
			assert.EqualValues(t, http.StatusOK, resp.Status)
			assert.Contains(t, browsertest.Eval[string](t, tab, `document.title`), "Vielen Dank", "the thank-you page, in German")
			browsertest.Capture(t, tab, fmt.Sprintf("thanks-%d", width))

			status, list := c.do(http.MethodGet, "/reviews?rating=4", nil)
			require.Equal(t, http.StatusOK, status)
			var mine map[string]any
			for _, it := range list["items"].([]any) {
				if r := it.(map[string]any); r["eventId"] == ref {
					mine = r
				}
			}
			require.NotNil(t, mine, "the review is in GET /reviews")
			assert.Equal(t, comment, mine["comment"])
			_, got := c.do(http.MethodGet, "/events/"+ref, nil)
			assert.Equal(t, mine["id"], got["review"].(map[string]any)["id"])

			// The unsubscribe link: a visit only asks; the button decides.
			unsubscribe := strings.Trim(m.Header.Get("List-Unsubscribe"), "<>")
			resp, err = chromedp.RunResponse(tab, chromedp.Navigate(unsubscribe))
			require.NoError(t, err)
			assert.EqualValues(t, http.StatusOK, resp.Status)
			status, sup := c.do(http.MethodGet, "/suppressions?address="+email, nil)
			require.Equal(t, http.StatusOK, status)
			assert.Empty(t, sup["items"], "opening the link unsubscribes nobody")
			browsertest.Capture(t, tab, fmt.Sprintf("unsubscribe-%d", width))
			require.NoError(t, chromedp.Do(tab, chromedp.Focus("form button")))
			resp, err = chromedp.RunResponse(tab, browsertest.Enter())
			require.NoError(t, err)
			assert.EqualValues(t, http.StatusOK, resp.Status)
			browsertest.Capture(t, tab, fmt.Sprintf("unsubscribed-%d", width))
			_, sup = c.do(http.MethodGet, "/suppressions?address="+email, nil)
			require.Len(t, sup["items"], 1, "the button unsubscribed the address")
			assert.Equal(t, "unsubscribed", sup["items"].([]any)[0].(map[string]any)["reason"])
		})
	}
}

// TestReminderEndToEnd: a setting with a reminder sends one, after the
// invite, to the same address with its own Message-ID; a review first
// means none.
func TestReminderEndToEnd(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	c := s.client()
	s.eventType(c, "checkout")
	status, list := c.do(http.MethodGet, "/invite-settings", nil)
	require.Equal(t, http.StatusOK, status)
	for _, it := range list["items"].([]any) {
		status, _ := c.do(http.MethodPatch, "/invite-settings/"+it.(map[string]any)["id"].(string),
			map[string]any{"reminder": map[string]any{"delay": "PT1S"}})
		require.Equal(t, http.StatusOK, status)
	}

	ref := s.accept(c, s.event("checkout", "ann@example.com"))
	invite := s.mailOf(ref)
	reminder := s.mailOf(ref + ".reminder")
	subject, err := new(mime.WordDecoder).DecodeHeader(reminder.Header.Get("Subject"))
	require.NoError(t, err)
	assert.NotEqual(t, invite.Header.Get("Subject"), reminder.Header.Get("Subject"), "the reminder has a subject of its own: %s", subject)
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		_, ev := c.do(http.MethodGet, "/events/"+ref, nil)
		rem, _ := inviteOf(ev)["reminder"].(map[string]any)
		assert.Equal(col, "sent", rem["status"])
	}, time.Minute, 50*time.Millisecond)
	assert.Equal(t, "Completed", s.waitClosed(ref))
	assert.Equal(t, 2, s.mailsByEvent()[ref]+s.mailsByEvent()[ref+".reminder"], "one invite and one reminder")
}
