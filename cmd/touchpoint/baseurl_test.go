package main

import (
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// publicBase is the only public address the worker below is told.
const publicBase = "https://reviews.shop.example"

// TestLinksOnTheBaseURL runs `touchpoint worker` (the real binary) with
// TOUCHPOINT_BASE_URL and nothing else that names an address a customer or
// a provider sees — besides what a worker needs anyway outside dev: the
// database, Temporal, the secret key, the SMTP server and the SMS
// provider's account — and reads what it sends: every link of an invite
// email (its feedback link, its visible unsubscribe links, its
// List-Unsubscribe header) and of an SMS invite, and the status callback
// URL handed to the SMS provider, are on that host and nowhere else. The
// links verify at the API (same paths, same key).
func TestLinksOnTheBaseURL(t *testing.T) {
	t.Parallel()
	provider := startSMSProvider(t)
	smsVars := map[string]string{
		"TOUCHPOINT_SMS_URL":         provider.URL,
		"TOUCHPOINT_SMS_ACCOUNT_SID": smsAccountSID,
		"TOUCHPOINT_SMS_AUTH_TOKEN":  "sms-auth-token",
		"TOUCHPOINT_SMS_FROM":        "+15005550006",
	}
	s := newStack(t, smsVars) // its API takes medium sms
	c := s.client()
	s.eventType(c, "checkout")
	s.eventType(c, "texted")
	status, list := c.do(http.MethodGet, "/event-types?name=texted", nil)
	require.Equal(t, http.StatusOK, status)
	texted := list["items"].([]any)[0].(map[string]any)["id"].(string)
	status, list = c.do(http.MethodGet, "/invite-settings?eventTypeId="+texted, nil)
	require.Equal(t, http.StatusOK, status)
	for _, it := range list["items"].([]any) {
		status, res := c.do(http.MethodPatch, "/invite-settings/"+it.(map[string]any)["id"].(string), map[string]any{"medium": "sms"})
		require.Equal(t, http.StatusOK, status, "%v", res)
	}

	s.stop("worker")
	env := map[string]string{
		"TOUCHPOINT_BASE_URL":    publicBase,
		"DATABASE_URL":           s.cfg.DatabaseURL,
		"TEMPORAL_ADDRESS":       s.cfg.TemporalAddress,
		"TOUCHPOINT_SECRET_KEY":  s.cfg.SecretKey,
		"TOUCHPOINT_SMTP_URL":    s.cfg.SMTPURL,
		"TOUCHPOINT_WORKER_ADDR": freeAddr(t),
	}
	for k, v := range smsVars {
		env[k] = v
	}
	startChild(t, childEnv(env), "worker")

	mailed := s.accept(c, s.event("checkout", "ann@example.com"))
	ev := s.event("texted", "bo@example.com")
	ev["customer"].(map[string]any)["mobile"] = "+4915112345678"
	texts := s.accept(c, ev)
	s.waitStatus(c, "sent", mailed, texts)

	// The email: every URL in it, in either part and in its headers.
	m := s.mailOf(mailed)
	unsub := m.Header.Get("List-Unsubscribe")
	require.Regexp(t, `^<https://reviews\.shop\.example/unsubscribe\?event=evt-[^>]+>$`, unsub)
	assert.Equal(t, "List-Unsubscribe=One-Click", m.Header.Get("List-Unsubscribe-Post"))
	parts := mailParts(t, m.Header.Get("Content-Type"), m.Body)
	require.Contains(t, parts, "text/plain")
	require.Contains(t, parts, "text/html")
	urls := append(urlsIn(parts["text/plain"]), urlsIn(parts["text/html"])...)
	urls = append(urls, strings.Trim(unsub, "<>"))
	var feedback, unsubscribe int
	for _, u := range urls {
		assert.True(t, strings.HasPrefix(u, publicBase+"/"), "a link on another host: %s", u)
		switch {
		case strings.HasPrefix(u, publicBase+"/feedback?"):
			feedback++
		case strings.HasPrefix(u, publicBase+"/unsubscribe?"):
			unsubscribe++
		}
		s.requireLinkWorks(u)
	}
	assert.GreaterOrEqual(t, feedback, 2, "the feedback link in the text and the HTML part: %v", urls)
	assert.GreaterOrEqual(t, unsubscribe, 3, "the visible unsubscribe link in both parts, and the header: %v", urls)

	// The SMS: its link, and the status callback the provider is given.
	sent := provider.messages()
	require.Len(t, sent, 1)
	callback := sent[0].Get("StatusCallback")
	assert.True(t, strings.HasPrefix(callback, publicBase+"/sms/status?"), "the status callback: %s", callback)
	links := urlsIn(sent[0].Get("Body"))
	require.Len(t, links, 1, "the SMS has its feedback link: %q", sent[0].Get("Body"))
	assert.True(t, strings.HasPrefix(links[0], publicBase+"/feedback?"), "the SMS's link: %s", links[0])
	s.requireLinkWorks(links[0])
}

var urlRE = regexp.MustCompile(`https?://[^\s"'<>]+`)

// urlsIn finds the absolute URLs in a text or HTML part (the HTML's
// entities decoded).
func urlsIn(s string) []string {
	var out []string
	for _, u := range urlRE.FindAllString(strings.ReplaceAll(s, "&amp;", "&"), -1) {
		out = append(out, strings.TrimRight(u, ".,;)"))
	}
	return out
}

// mailParts returns the decoded leaves of a MIME body by content type.
func mailParts(t *testing.T, contentType string, body io.Reader) map[string]string {
	t.Helper()
	mt, params, err := mime.ParseMediaType(contentType)
	require.NoError(t, err)
	out := map[string]string{}
	if !strings.HasPrefix(mt, "multipart/") {
		b, err := io.ReadAll(body)
		require.NoError(t, err)
		out[mt] = string(b)
		return out
	}
	r := multipart.NewReader(body, params["boundary"])
	for {
		p, err := r.NextPart() // decodes quoted-printable
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		for k, v := range mailParts(t, p.Header.Get("Content-Type"), p) {
			out[k] = v
		}
	}
}

// requireLinkWorks opens a link of an invite at the stack's API (which
// serves the same paths under its own address): it verifies.
func (s *stack) requireLinkWorks(link string) {
	s.t.Helper()
	u, err := url.Parse(link)
	require.NoError(s.t, err)
	res, err := http.Get(s.cfg.BaseURL + u.RequestURI())
	require.NoError(s.t, err)
	res.Body.Close()
	assert.Equal(s.t, http.StatusOK, res.StatusCode, "%s", link)
}

const smsAccountSID = "AC00000000000000000000000000000042"

// smsProvider is a local server speaking the Twilio Messages API: it
// records every message posted and answers 201 with a new SID.
type smsProvider struct {
	*httptest.Server
	mu   sync.Mutex
	sent []url.Values
}

func startSMSProvider(t *testing.T) *smsProvider {
	t.Helper()
	p := &smsProvider{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/2010-04-01/Accounts/"+smsAccountSID+"/Messages.json" || r.ParseForm() != nil {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		p.mu.Lock()
		p.sent = append(p.sent, r.PostForm)
		n := len(p.sent)
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"sid": "SM%032d", "status": "queued"}`, n)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *smsProvider) messages() []url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]url.Values(nil), p.sent...)
}
