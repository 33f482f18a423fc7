package signin_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/console"
	"github.com/touchpoint/touchpoint/console/signin"
	"github.com/touchpoint/touchpoint/internal/oidctest"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/internal/testclock"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/webform"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/webhook"
)

const rigSecretKey = "console-test-secret-key-0123456789abcdef"

// rig is the console as the API serves it, with its real sign-in through
// a real provider: the built-in issuer (mailing its links into a
// directory, as `touchpoint dev` does) or a provider served by the test.
type rig struct {
	t        *testing.T
	url      string // the console's base URL
	srv      *httptest.Server
	db       *sqlx.DB
	st       *store.Store
	ps       *persondb.Store
	clock    *testclock.Clock
	account  string
	other    string // a second account
	outbox   string // the built-in issuer's mails
	provider *oidctest.Provider
}

func newRig(t *testing.T, tls bool) *rig {
	t.Helper()
	g := &rig{t: t, db: testdb.New(t), clock: testclock.New(time.Now().UTC().Truncate(time.Second))}
	g.st = storeset.New(g.db, "P7D")
	g.st.SetClock(g.clock.Now)
	base := pg.NewDB(g.db)
	base.SetClock(g.clock.Now)
	g.ps = persondb.New(base)
	ctx := context.Background()
	acc, _, err := g.st.Accounts.CreateAccount(ctx, "Nordlicht")
	require.NoError(t, err)
	other, _, err := g.st.Accounts.CreateAccount(ctx, "Elsewhere")
	require.NoError(t, err)
	g.account, g.other = acc.ID, other.ID
	g.srv = httptest.NewUnstartedServer(nil)
	if tls {
		g.srv.StartTLS()
	} else {
		g.srv.Start()
	}
	t.Cleanup(g.srv.Close)
	g.url = g.srv.URL
	return g
}

// serve builds the console with its sign-in through prov.
func (g *rig) serve(prov signin.Provider) {
	g.t.Helper()
	logger := slog.New(slog.NewTextHandler(g.t.Output(), nil))
	auth, err := signin.New(signin.Options{BaseURL: g.url, Provider: prov, Store: g.ps, SecretKey: rigSecretKey,
		HTTPClient: g.srv.Client(), Logger: logger, Now: g.clock.Now})
	require.NoError(g.t, err)
	lib, err := templates.Load()
	require.NoError(g.t, err)
	secrets, err := webhook.NewSecretBox(secretkey.Derive(rigSecretKey, secretkey.WebhookSecret))
	require.NoError(g.t, err)
	h, err := console.New(console.Options{WebhookSecrets: secrets, BaseURL: g.url, SignedIn: auth.SignedIn, Allows: console.Allows,
		SignOutPath: signin.SignOutPath, Invites: g.st.Invites, Accounts: g.st.Accounts, Stats: g.st.Stats, Webhooks: g.st.Webhooks, Reviews: g.st.Reviews,
		Suppressions: g.st.Suppressions, TemplateStore: g.st.Templates, Reports: g.st.Reports, Templates: lib, People: g.ps, PeopleStore: g.ps,
		Logger: logger, Now: g.clock.Now})
	require.NoError(g.t, err)
	auth.Mount(h)
	g.srv.Config.Handler = h
}

// builtIn is a rig whose people sign in through the built-in issuer.
func builtIn(t *testing.T) *rig {
	t.Helper()
	g := newRig(t, false)
	g.outbox = t.TempDir()
	mailer, err := mail.NewDir(g.outbox, "Touchpoint <sign-in@touchpoint.test>", nil)
	require.NoError(t, err)
	issuer := httptest.NewUnstartedServer(nil)
	iss := "http://" + issuer.Listener.Addr().String()
	srv, err := authserver.New(context.Background(), authserver.Options{Store: g.st.Auth, Issuer: iss, Audience: g.url,
		SecretKey: rigSecretKey, Now: g.clock.Now, Logger: slog.New(slog.NewTextHandler(t.Output(), nil)),
		People: g.ps, Mail: mailer, RelyingParties: []authserver.RelyingParty{{ClientID: signin.ClientID,
			RedirectURIs: []string{g.url + signin.CallbackPath}, Home: g.url + console.HomePath}}})
	require.NoError(t, err)
	issuer.Config.Handler = srv
	issuer.Start()
	t.Cleanup(issuer.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	g.serve(signin.Provider{Issuer: iss, ClientID: signin.ClientID, BuiltIn: true})
	return g
}

// external is a rig whose people sign in through a provider of their
// own, served over https as a real one is.
func external(t *testing.T, matchEmail bool) *rig {
	t.Helper()
	g := newRig(t, true)
	g.provider = oidctest.Start(t, "touchpoint", "console-secret")
	g.provider.Now = g.clock.Now
	g.serve(signin.Provider{Issuer: g.provider.Issuer(), ClientID: "touchpoint", ClientSecret: "console-secret", MatchEmail: matchEmail})
	return g
}

func (g *rig) browser() *webform.Browser {
	b := webform.New(g.t)
	b.HTTP.Transport = g.srv.Client().Transport
	return b
}

func (g *rig) person(email string, role people.Role) persondb.Person {
	g.t.Helper()
	p, err := g.ps.CreatePerson(context.Background(), people.Operator, g.account, email, role)
	require.NoError(g.t, err)
	return p
}

var linkRE = regexp.MustCompile(`https?://\S+/oauth/sign-in\?token=[A-Za-z0-9_-]{43}`)

// mailedLink waits for the n+1st sign-in mail in the outbox and returns
// its link.
func (g *rig) mailedLink(n int) string {
	g.t.Helper()
	var files []string
	require.Eventually(g.t, func() bool {
		files, _ = filepath.Glob(filepath.Join(g.outbox, "lnk-*.eml"))
		return len(files) > n
	}, 10*time.Second, 10*time.Millisecond, "a sign-in mail")
	var newest string
	var at time.Time
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && !st.ModTime().Before(at) {
			newest, at = f, st.ModTime()
		}
	}
	raw, err := os.ReadFile(newest)
	require.NoError(g.t, err)
	link := linkRE.FindString(webform.MailText(g.t, raw))
	require.NotEmpty(g.t, link)
	return link
}

// signIn signs email in with b through the built-in issuer and returns
// the console page it lands on.
func (g *rig) signIn(b *webform.Browser, email, path string) *webform.Page {
	g.t.Helper()
	n, _ := filepath.Glob(filepath.Join(g.outbox, "lnk-*.eml"))
	page := g.walk(b, signin.Path+"?"+url.Values{"next": {path}}.Encode())
	require.Equal(g.t, http.StatusOK, page.StatusCode, page.Body)
	b.Submit(page, page.Form(g.t, authserver.AuthorizePath), map[string]string{"email": email})
	link := g.mailedLink(len(n))
	confirm := b.Get(link)
	require.Equal(g.t, http.StatusOK, confirm.StatusCode, confirm.Body)
	p := b.Submit(confirm, confirm.Form(g.t, authserver.SignInPath), nil)
	for i := 0; p.StatusCode == http.StatusSeeOther && i < 5; i++ {
		p = b.Follow(p)
	}
	return p
}

// whoIs is the address the page's header says is signed in, "" when
// nobody is.
func whoIs(p *webform.Page) string {
	for _, n := range webform.Find(p.Doc, func(n *html.Node) bool { return webform.Attr(n, "class") == "who" }) {
		return webform.Text(n)
	}
	return ""
}

func cookieOf(p *webform.Page, name string) *http.Cookie {
	for _, c := range p.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestSignInThroughTheBuiltInIssuer: the whole code flow, as a browser
// without script walks it: the console sends the browser to the issuer
// with PKCE S256, state and nonce; the link in the mail brings it back
// with a code; the console signs the person in with a fresh session and
// shows who they are.
func TestSignInThroughTheBuiltInIssuer(t *testing.T) {
	t.Parallel()
	g := builtIn(t)
	anna := g.person("anna@shop.example", people.Editor)
	b := g.browser()

	first := b.Get(g.url + "/console/reviews?rating=5")
	require.Equal(t, http.StatusSeeOther, first.StatusCode, "a page without a session sends the browser to sign in")
	start := b.Follow(first)
	require.Equal(t, http.StatusSeeOther, start.StatusCode, start.Body)
	to := start.Location()
	q := to.Query()
	assert.Equal(t, authserver.AuthorizePath, to.Path)
	assert.Equal(t, "code", q.Get("response_type"))
	assert.Equal(t, signin.ClientID, q.Get("client_id"))
	assert.Equal(t, g.url+signin.CallbackPath, q.Get("redirect_uri"))
	assert.Equal(t, "S256", q.Get("code_challenge_method"))
	assert.Len(t, q.Get("code_challenge"), 43)
	assert.NotEmpty(t, q.Get("state"))
	assert.NotEmpty(t, q.Get("nonce"))
	assert.NotEqual(t, q.Get("state"), q.Get("nonce"))
	signInCookie := cookieOf(start, "tp-console-sign-in")
	require.NotNil(t, signInCookie)
	assert.True(t, signInCookie.HttpOnly)
	assert.Equal(t, http.SameSiteLaxMode, signInCookie.SameSite)
	assert.NotContains(t, signInCookie.Value, q.Get("state"), "the state is sealed, not readable in the cookie")

	landed := g.signIn(b, "anna@shop.example", "/console/reviews?rating=5")
	require.Equal(t, http.StatusOK, landed.StatusCode, landed.Body)
	assert.Equal(t, "/console/reviews", landed.URL.Path, "back where the person was going")
	assert.Equal(t, "rating=5", landed.URL.RawQuery)
	assert.Contains(t, whoIs(landed), "anna@shop.example", "the page says who is signed in")
	assert.Contains(t, whoIs(landed), "editor")

	trail, _, err := g.ps.Audit(context.Background(), g.account, persondb.AuditFilter{Actor: people.PersonActor(anna.ID)}, pg.Page{})
	require.NoError(t, err)
	var actions []string
	for _, e := range trail {
		actions = append(actions, e.Action)
	}
	assert.Contains(t, actions, persondb.AuditSessionStarted, "the sign-in is in the audit trail")
}

// TestSessionCookieAndFreshSessions: the cookie is HttpOnly and
// SameSite=Lax; a sign-in always starts a new session and ends the one
// the browser had, so a session fixed in the browser beforehand is
// worth nothing.
func TestSessionCookieAndFreshSessions(t *testing.T) {
	t.Parallel()
	g := builtIn(t)
	g.person("anna@shop.example", people.Owner)
	b := g.browser()
	u, _ := url.Parse(g.url)
	planted := &http.Cookie{Name: "tp-console", Value: "planted-by-an-attacker-planted-by-an-attacke", Path: "/"}
	b.HTTP.Jar.SetCookies(u, []*http.Cookie{planted})
	g.signIn(b, "anna@shop.example", "/console/")
	first := sessionCookie(t, b, u)
	assert.NotEqual(t, planted.Value, first, "a planted cookie is replaced")

	again := g.signIn(b, "anna@shop.example", "/console/")
	require.Equal(t, http.StatusOK, again.StatusCode)
	second := sessionCookie(t, b, u)
	assert.NotEqual(t, first, second, "every sign-in starts a new session")

	stale := g.browser()
	stale.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: "tp-console", Value: first, Path: "/"}})
	assert.Equal(t, http.StatusSeeOther, stale.Get(g.url+"/console/").StatusCode, "the session before it ended")
}

func sessionCookie(t *testing.T, b *webform.Browser, u *url.URL) string {
	t.Helper()
	for _, c := range b.HTTP.Jar.Cookies(u) {
		if c.Name == "tp-console" || c.Name == "__Host-tp-console" {
			return c.Value
		}
	}
	t.Fatal("no session cookie")
	return ""
}

// TestSessionsEnd: after 30 minutes unused, after 12 hours however
// used, when the person is disabled, or signed out by the operator.
func TestSessionsEnd(t *testing.T) {
	t.Parallel()
	g := builtIn(t)
	anna := g.person("anna@shop.example", people.Owner)
	signedIn := func(b *webform.Browser) bool { return b.Get(g.url+"/console/").StatusCode == http.StatusOK }

	b := g.browser()
	g.signIn(b, "anna@shop.example", "/console/")
	g.clock.Advance(29 * time.Minute)
	require.True(t, signedIn(b), "used within 30 minutes")
	g.clock.Advance(30 * time.Minute)
	assert.False(t, signedIn(b), "30 minutes idle")

	b = g.browser()
	g.signIn(b, "anna@shop.example", "/console/")
	var used time.Duration
	for used < 13*time.Hour && signedIn(b) {
		g.clock.Advance(29 * time.Minute)
		used += 29 * time.Minute
	}
	assert.Greater(t, used, 11*time.Hour+30*time.Minute, "used every 29 minutes, it lasts")
	assert.LessOrEqual(t, used, 12*time.Hour+29*time.Minute, "12 hours at most")

	b = g.browser()
	g.signIn(b, "anna@shop.example", "/console/")
	_, err := g.ps.SignOut(context.Background(), people.Operator, g.account, anna.ID)
	require.NoError(t, err)
	assert.False(t, signedIn(b), "touchpoint users sign-out ends it")

	b = g.browser()
	g.signIn(b, "anna@shop.example", "/console/")
	_, _, err = g.ps.Disable(context.Background(), people.Operator, g.account, anna.ID)
	require.NoError(t, err)
	assert.False(t, signedIn(b), "disabling ends it at once")
}

// TestSignOut: only from the console's own page with the session's
// token; then the session is gone.
func TestSignOut(t *testing.T) {
	t.Parallel()
	g := builtIn(t)
	g.person("anna@shop.example", people.Viewer)
	b := g.browser()
	page := g.signIn(b, "anna@shop.example", "/console/")
	form := page.Form(t, signin.SignOutPath)
	require.NotEmpty(t, form.Values.Get("csrf_token"))

	post := func(origin string, values url.Values) *webform.Page {
		req, err := http.NewRequest(http.MethodPost, g.url+signin.SignOutPath, strings.NewReader(values.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		return b.Do(req)
	}
	assert.Equal(t, http.StatusForbidden, post(g.url, url.Values{"csrf_token": {"forged"}}).StatusCode, "a wrong token")
	assert.Equal(t, http.StatusForbidden, post(g.url, nil).StatusCode, "no token")
	assert.Equal(t, http.StatusForbidden, post("https://evil.example", form.Values).StatusCode, "another origin")
	assert.Equal(t, http.StatusForbidden, post("", form.Values).StatusCode, "no origin")
	assert.Equal(t, http.StatusOK, b.Get(g.url+"/console/").StatusCode, "still signed in")

	out := b.Submit(page, form, nil)
	assert.Equal(t, http.StatusOK, out.StatusCode)
	assert.Empty(t, whoIs(out))
	assert.Equal(t, http.StatusSeeOther, b.Get(g.url+"/console/").StatusCode, "signed out")
}

// TestCallbackTakesOnlyItsOwnBrowsersAnswer: an answer whose state is
// not the one sealed in this browser's cookie (login CSRF: an attacker's
// code sent to a victim) never makes a session.
func TestCallbackTakesOnlyItsOwnBrowsersAnswer(t *testing.T) {
	t.Parallel()
	g := external(t, false)
	mallory := g.person("mallory@shop.example", people.Owner)
	require.NoError(t, g.ps.Link(context.Background(), people.Operator, g.account, mallory.ID, g.provider.Issuer(), "mallory"))
	g.provider.SignIn(oidctest.User{Subject: "mallory"})

	// Mallory gets a code for herself…
	attacker := g.browser()
	start := attacker.Follow(attacker.Get(g.url + signin.Path))
	require.Equal(t, http.StatusSeeOther, start.StatusCode)
	callback := start.Location()
	// …and has the victim's browser open the callback with it.
	victim := g.browser()
	p := victim.Get(callback.String())
	assert.Equal(t, http.StatusBadRequest, p.StatusCode)
	assert.Nil(t, cookieOf(p, "__Host-tp-console"), "no session for the victim")

	// A state that is not the sign-in's is refused as well.
	b := g.browser()
	start = b.Follow(b.Get(g.url + signin.Path))
	forged := start.Location()
	v := forged.Query()
	v.Set("state", "not-the-state")
	forged.RawQuery = v.Encode()
	assert.Equal(t, http.StatusBadRequest, b.Get(forged.String()).StatusCode)
}

// TestExternalProvider: a person linked with `users link` signs in
// through the shop's own provider; the session cookie is Secure and
// __Host- prefixed under https.
func TestExternalProvider(t *testing.T) {
	t.Parallel()
	g := external(t, false)
	anna := g.person("anna@shop.example", people.Viewer)
	require.NoError(t, g.ps.Link(context.Background(), people.Operator, g.account, anna.ID, g.provider.Issuer(), "kc-anna"))
	g.provider.SignIn(oidctest.User{Subject: "kc-anna", Email: "someone.else@shop.example", EmailVerified: true})

	b := g.browser()
	p := b.Get(g.url + "/console/")
	var session *http.Cookie
	for i := 0; p.StatusCode == http.StatusSeeOther && i < 6; i++ {
		if c := cookieOf(p, "__Host-tp-console"); c != nil {
			session = c
		}
		p = b.Follow(p)
	}
	require.Equal(t, http.StatusOK, p.StatusCode, p.Body)
	assert.Contains(t, whoIs(p), "anna@shop.example", "the linked person, whatever address the provider names")
	require.NotNil(t, session, "the session cookie is __Host- prefixed under https")
	assert.True(t, session.Secure)
	assert.True(t, session.HttpOnly)
	assert.Equal(t, "/", session.Path)
	assert.Empty(t, session.Domain)
	assert.Equal(t, http.SameSiteLaxMode, session.SameSite)

	// Someone the provider knows but Touchpoint does not is turned away.
	g.provider.SignIn(oidctest.User{Subject: "kc-stranger", Email: "anna@shop.example", EmailVerified: true})
	p = g.walk(g.browser(), "/console/")
	assert.Equal(t, http.StatusForbidden, p.StatusCode, "an address alone does not sign in unless allowed")
}

// walk loads path in b and follows every redirect.
func (g *rig) walk(b *webform.Browser, path string) *webform.Page {
	g.t.Helper()
	p := b.Get(g.url + path)
	for i := 0; p.StatusCode == http.StatusSeeOther && i < 8; i++ {
		p = b.Follow(p)
	}
	return p
}

// TestExternalProviderMatchesVerifiedEmail: with
// TOUCHPOINT_CONSOLE_MATCH_EMAIL, the provider's verified email claim
// finds the person, who is linked from then on; an unverified one does
// not.
func TestExternalProviderMatchesVerifiedEmail(t *testing.T) {
	t.Parallel()
	g := external(t, true)
	ben := g.person("ben@shop.example", people.Editor)

	g.provider.SignIn(oidctest.User{Subject: "kc-ben", Email: "Ben@Shop.Example", EmailVerified: false})
	assert.Equal(t, http.StatusForbidden, g.walk(g.browser(), "/console/").StatusCode, "an unverified address")

	g.provider.SignIn(oidctest.User{Subject: "kc-ben", Email: "Ben@Shop.Example", EmailVerified: true})
	p := g.walk(g.browser(), "/console/")
	require.Equal(t, http.StatusOK, p.StatusCode, p.Body)
	assert.Contains(t, whoIs(p), "ben@shop.example")
	linked, err := g.ps.PersonByIdentity(context.Background(), g.provider.Issuer(), "kc-ben")
	require.NoError(t, err)
	assert.Equal(t, ben.ID, linked.ID, "linked from then on")
}

// TestIDTokenIsChecked: a token of another issuer, for another
// audience, expired, with another nonce, or not signed by the provider
// never makes a session.
func TestIDTokenIsChecked(t *testing.T) {
	t.Parallel()
	g := external(t, false)
	anna := g.person("anna@shop.example", people.Owner)
	require.NoError(t, g.ps.Link(context.Background(), people.Operator, g.account, anna.ID, g.provider.Issuer(), "kc-anna"))
	g.provider.SignIn(oidctest.User{Subject: "kc-anna"})
	for name, tamper := range map[string]func(map[string]any){
		"another issuer":   func(c map[string]any) { c["iss"] = "https://evil.example" },
		"another audience": func(c map[string]any) { c["aud"] = "someone-else" },
		"expired":          func(c map[string]any) { c["exp"] = g.clock.Now().Add(-time.Minute).Unix() },
		"another nonce":    func(c map[string]any) { c["nonce"] = "replayed" },
		"no nonce":         func(c map[string]any) { delete(c, "nonce") },
	} {
		g.provider.Tamper = tamper
		p := g.walk(g.browser(), "/console/")
		assert.Equal(t, http.StatusBadRequest, p.StatusCode, name)
	}
	g.provider.Tamper = nil
	assert.Equal(t, http.StatusOK, g.walk(g.browser(), "/console/").StatusCode, "untampered, it signs in")
}

// TestConsolePagesCannotBeFramed: every answer of the console, signed
// in or not, forbids framing and loads no script but by its hash.
func TestConsolePagesCannotBeFramed(t *testing.T) {
	t.Parallel()
	g := builtIn(t)
	g.person("anna@shop.example", people.Owner)
	b := g.browser()
	pages := []*webform.Page{b.Get(g.url + "/console/"), b.Get(g.url + signin.CallbackPath), g.signIn(b, "anna@shop.example", "/console/")}
	for _, p := range pages {
		csp := p.Header.Get("Content-Security-Policy")
		assert.Contains(t, csp, "frame-ancestors 'none'", "%s", p.URL)
		assert.NotContains(t, csp, "unsafe-inline", "%s", p.URL)
		assert.Regexp(t, `script-src 'sha256-[A-Za-z0-9+/=]+'`, csp, "%s", p.URL)
	}
}

// TestSignInNeverLeavesTheConsole: where a sign-in leads afterwards is a
// page of the console, whatever the link that started it said.
func TestSignInNeverLeavesTheConsole(t *testing.T) {
	t.Parallel()
	g := external(t, false)
	anna := g.person("anna@shop.example", people.Viewer)
	require.NoError(t, g.ps.Link(context.Background(), people.Operator, g.account, anna.ID, g.provider.Issuer(), "kc-anna"))
	g.provider.SignIn(oidctest.User{Subject: "kc-anna"})
	for next, want := range map[string]string{
		"https://evil.example/console/": "/console/",
		"//evil.example/console/":       "/console/",
		"/\\evil.example":               "/console/",
		"/elsewhere":                    "/console/",
		"/console/reviews?rating=1":     "/console/reviews?rating=1",
	} {
		p := g.walk(g.browser(), signin.Path+"?"+url.Values{"next": {next}}.Encode())
		require.Equal(t, http.StatusOK, p.StatusCode, next)
		assert.Equal(t, g.url+want, p.URL.String(), "after signing in from next=%q", next)
	}
}

// TestPersonChoosesTheLanguage: a person reads the console in the
// language they chose on the settings page, whatever their browser asks
// for, until they choose their browser's again; a language the console
// does not have is refused at its field.
func TestPersonChoosesTheLanguage(t *testing.T) {
	t.Parallel()
	g := builtIn(t)
	anna := g.person("anna@shop.example", people.Viewer)
	b := g.browser()
	b.Header.Set("Accept-Language", "fr-CH, fr;q=0.9")
	settings := g.signIn(b, "anna@shop.example", "/console/settings")
	require.Equal(t, http.StatusOK, settings.StatusCode, settings.Body)
	lang := func(p *webform.Page) string {
		t.Helper()
		html := webform.Find(p.Doc, func(n *html.Node) bool { return n.Data == "html" })
		require.NotEmpty(t, html)
		return webform.Attr(html[0], "lang")
	}
	assert.Equal(t, "fr", lang(settings), "the browser's, while the person has chosen none")

	form := settings.Form(t, "/console/settings/language")
	saved := b.Submit(settings, form, map[string]string{"language": "de"})
	require.Equal(t, http.StatusSeeOther, saved.StatusCode, saved.Body)
	saved = b.Follow(saved)
	assert.Equal(t, "de", lang(saved), "a viewer chooses their own language")
	assert.Contains(t, saved.Body, "Sprache gespeichert.")
	assert.Equal(t, "de", lang(b.Get(g.url+"/console/reviews")), "on every page")
	got, err := g.ps.Person(context.Background(), g.account, anna.ID)
	require.NoError(t, err)
	assert.Equal(t, "de", got.Language)

	refused := b.Submit(settings, form, map[string]string{"language": "xx"})
	assert.Equal(t, http.StatusBadRequest, refused.StatusCode)
	assert.NotEmpty(t, webform.Find(refused.Doc, func(n *html.Node) bool { return webform.Attr(n, "id") == "language-error" }))

	g.clock.Advance(time.Second) // the rig's clock stands still: the trail orders by time
	back := b.Follow(b.Submit(settings, form, map[string]string{"language": ""}))
	assert.Equal(t, "fr", lang(back), "the browser's again")
	trail, _, err := g.ps.Audit(context.Background(), g.account, persondb.AuditFilter{Actor: people.PersonActor(anna.ID)}, pg.Page{})
	require.NoError(t, err)
	var changes []string
	for _, e := range trail {
		if e.Action == persondb.AuditLanguageChanged {
			changes = append(changes, e.Detail["language"])
		}
	}
	assert.Equal(t, []string{"", "de"}, changes, "each choice is in the trail, newest first")
}
