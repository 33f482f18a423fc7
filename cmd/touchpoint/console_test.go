package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/webform"
	"github.com/touchpoint/touchpoint/storeset"
)

var signInLink = regexp.MustCompile(`https?://\S+/oauth/sign-in\?token=[A-Za-z0-9_-]{43}`)

// TestConsoleSignInOnTheStack: on the processes wired as the commands
// wire them, the dev owner opens the console, is sent to the built-in
// issuer, gets the link by SMTP (TOUCHPOINT_SMTP_URL, as the worker's
// mail goes) and lands signed in.
func TestConsoleSignInOnTheStack(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	b := webform.New(t)
	p := b.Get(s.cfg.BaseURL + "/console/")
	for i := 0; p.StatusCode == http.StatusSeeOther && i < 5; i++ {
		p = b.Follow(p)
	}
	require.Equal(t, http.StatusOK, p.StatusCode, p.Body)
	assert.Equal(t, s.cfg.AuthURL+authserver.AuthorizePath, p.URL.Scheme+"://"+p.URL.Host+p.URL.Path)
	b.Submit(p, p.Form(t, authserver.AuthorizePath), map[string]string{"email": devOwner})

	var link string
	require.Eventually(t, func() bool {
		for _, m := range s.smtp.Messages() {
			if len(m.To) == 1 && m.To[0] == devOwner {
				link = signInLink.FindString(webform.MailText(t, m.Data))
			}
		}
		return link != ""
	}, 20*time.Second, 20*time.Millisecond, "the sign-in mail, by SMTP")
	confirm := b.Get(link)
	require.Equal(t, http.StatusOK, confirm.StatusCode, confirm.Body)
	p = b.Submit(confirm, confirm.Form(t, authserver.SignInPath), nil)
	for i := 0; p.StatusCode == http.StatusSeeOther && i < 5; i++ {
		p = b.Follow(p)
	}
	require.Equal(t, http.StatusOK, p.StatusCode, p.Body)
	assert.Equal(t, s.cfg.BaseURL+"/console/", p.URL.String())
	who := webform.Find(p.Doc, func(n *html.Node) bool { return webform.Attr(n, "class") == "who" })
	require.Len(t, who, 1)
	assert.Contains(t, webform.Text(who[0]), devOwner)
	assert.Contains(t, webform.Text(who[0]), "owner")
}

// TestConsoleIsWired builds the console as `touchpoint api` does: every
// option the console requires is given (it panics otherwise), in
// milliseconds rather than a whole stack's start.
func TestConsoleIsWired(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"TOUCHPOINT_SECRET_KEY": "console-wiring-secret-key-0123456789abcdef"}[k]
	})
	require.NoError(t, err)
	fb, unsub, err := pageLinks(cfg)
	require.NoError(t, err)
	secrets, err := webhookSecrets(cfg)
	require.NoError(t, err)
	h, err := consoleHandler(cfg, storeset.New(testdb.New(t), "P7D"), slog.New(slog.DiscardHandler),
		consoleParts{fb: fb, unsub: unsub, secrets: secrets, cancelled: func(string) {}, retried: func() {}})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/console/", nil))
	assert.Equal(t, http.StatusSeeOther, rec.Code, "nobody is signed in: off to sign in")
	assert.Equal(t, "/console/sign-in?next=%2Fconsole%2F", rec.Header().Get("Location"))
}
