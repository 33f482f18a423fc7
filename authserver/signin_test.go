package authserver_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/oauth2"

	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/internal/webform"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/authdb"
	"github.com/touchpoint/touchpoint/store/persondb"
)

// mailbox is the issuer's mail server: it keeps what is sent.
type mailbox struct {
	mu   sync.Mutex
	sent []mail.Message
}

func (m *mailbox) Send(_ context.Context, msg mail.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, msg)
	return nil
}

func (m *mailbox) to(addr string) []mail.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []mail.Message
	for _, msg := range m.sent {
		if msg.To == addr {
			out = append(out, msg)
		}
	}
	return out
}

func (m *mailbox) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sent)
}

const (
	consoleID       = "touchpoint-console"
	consoleCallback = "http://api.touchpoint.test/console/callback"
)

// peopleFixture is an issuer that signs people in to the console.
type peopleFixture struct {
	*fixture
	people  *persondb.Store
	mail    *mailbox
	account string
}

func newPeopleFixture(t *testing.T) *peopleFixture {
	t.Helper()
	pf := &peopleFixture{mail: &mailbox{}}
	pf.fixture = newFixture(t, func(o *authserver.Options) {
		// The people's repository shares the fixture's pool and clock.
		pf.people = persondb.New(o.Store.(*authdb.Store).DB)
		o.People, o.Mail = pf.people, pf.mail
		o.RelyingParties = []authserver.RelyingParty{{ClientID: consoleID, RedirectURIs: []string{consoleCallback},
			Home: "http://api.touchpoint.test/console/"}}
	})
	pf.account = pf.client.AccountID
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); pf.srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return pf
}

func (pf *peopleFixture) person(t *testing.T, email string, role people.Role) persondb.Person {
	t.Helper()
	p, err := pf.people.CreatePerson(context.Background(), people.Operator, pf.account, email, role)
	require.NoError(t, err)
	return p
}

var linkRE = regexp.MustCompile(`https?://\S+/oauth/sign-in\?token=[A-Za-z0-9_-]{43}`)

// waitForLink waits for a sign-in mail to addr beyond the n it had and
// returns its link.
func (pf *peopleFixture) waitForLink(t *testing.T, addr string, n int) string {
	t.Helper()
	require.Eventually(t, func() bool { return len(pf.mail.to(addr)) > n }, 10*time.Second, 5*time.Millisecond, "a sign-in mail to %s", addr)
	msg := pf.mail.to(addr)[n]
	link := linkRE.FindString(msg.Text)
	require.NotEmpty(t, link, "the mail's text carries the link:\n%s", msg.Text)
	assert.Contains(t, msg.HTML, html.EscapeString(link), "and its HTML")
	return link
}

// request is the console's side of one sign-in: its state, nonce and
// PKCE verifier.
type request struct {
	state, nonce, verifier string
}

func newRequest() request {
	return request{state: oauth2.GenerateVerifier(), nonce: oauth2.GenerateVerifier(), verifier: oauth2.GenerateVerifier()}
}

func (pf *peopleFixture) authorizeURL(r request) string {
	return pf.url + authserver.AuthorizePath + "?" + url.Values{
		"response_type": {"code"}, "client_id": {consoleID}, "redirect_uri": {consoleCallback}, "scope": {"openid email"},
		"state": {r.state}, "nonce": {r.nonce}, "code_challenge": {oauth2.S256ChallengeFromVerifier(r.verifier)},
		"code_challenge_method": {"S256"}}.Encode()
}

// askForLink opens the authorization page in b and asks for a link for
// addr; it returns the answer.
func (pf *peopleFixture) askForLink(t *testing.T, b *webform.Browser, r request, addr string) *webform.Page {
	t.Helper()
	page := b.Get(pf.authorizeURL(r))
	require.Equal(t, http.StatusOK, page.StatusCode, page.Body)
	return b.Submit(page, page.Form(t, authserver.AuthorizePath), map[string]string{"email": addr})
}

// signIn follows a link in b and confirms; it returns the redirect to the
// console.
func (pf *peopleFixture) signIn(t *testing.T, b *webform.Browser, link string) *webform.Page {
	t.Helper()
	page := b.Get(link)
	require.Equal(t, http.StatusOK, page.StatusCode, page.Body)
	return b.Submit(page, page.Form(t, authserver.SignInPath), nil)
}

// trade trades a code at the token endpoint.
func (pf *peopleFixture) trade(t *testing.T, form url.Values) (*http.Response, map[string]any) {
	t.Helper()
	return pf.post(t, form.Encode(), nil)
}

func codeForm(code, verifier string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "client_id": {consoleID}, "code": {code},
		"redirect_uri": {consoleCallback}, "code_verifier": {verifier}}
}

func TestPersonSignsInWithTheCodeFlow(t *testing.T) {
	t.Parallel()
	pf := newPeopleFixture(t)
	anna := pf.person(t, "anna@shop.example", people.Editor)
	b := webform.New(t)
	r := newRequest()

	sent := pf.askForLink(t, b, r, "Anna@Shop.Example")
	require.Equal(t, http.StatusOK, sent.StatusCode, sent.Body)
	link := pf.waitForLink(t, "anna@shop.example", 0)

	back := pf.signIn(t, b, link)
	require.Equal(t, http.StatusSeeOther, back.StatusCode, back.Body)
	to := back.Location()
	assert.Equal(t, consoleCallback, to.Scheme+"://"+to.Host+to.Path)
	assert.Equal(t, r.state, to.Query().Get("state"))
	assert.Equal(t, pf.url, to.Query().Get("iss"), "RFC 9207: the answer names its issuer")
	code := to.Query().Get("code")
	require.NotEmpty(t, code)

	resp, body := pf.trade(t, codeForm(code, r.verifier))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assertNoStore(t, resp)
	raw, _ := body["id_token"].(string)
	require.NotEmpty(t, raw)

	// go-oidc, as the console checks it: issuer, audience, expiry, keys.
	ctx := oidc.ClientContext(context.Background(), http.DefaultClient)
	provider, err := oidc.NewProvider(ctx, pf.url)
	require.NoError(t, err)
	v := provider.Verifier(&oidc.Config{ClientID: consoleID, Now: pf.clock.Now})
	tok, err := v.Verify(ctx, raw)
	require.NoError(t, err)
	assert.Equal(t, anna.ID, tok.Subject)
	assert.Equal(t, r.nonce, tok.Nonce)
	var claims struct {
		Email    string `json:"email"`
		Verified bool   `json:"email_verified"`
	}
	require.NoError(t, tok.Claims(&claims))
	assert.Equal(t, "anna@shop.example", claims.Email)
	assert.True(t, claims.Verified)
	assert.Equal(t, pf.clock.Now().Add(authserver.IDTokenLifetime).Unix(), tok.Expiry.Unix())

	// The code trades once.
	resp, body = pf.trade(t, codeForm(code, r.verifier))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "invalid_grant", body["error"])
}

func TestDiscoveryOffersTheCodeFlowWithPKCE(t *testing.T) {
	t.Parallel()
	pf := newPeopleFixture(t)
	resp, doc := do(t, mustGet(t, pf.url+authserver.DiscoveryPath))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, pf.url+authserver.AuthorizePath, doc["authorization_endpoint"])
	assert.Equal(t, []any{"code"}, doc["response_types_supported"])
	assert.Equal(t, []any{"S256"}, doc["code_challenge_methods_supported"])
	assert.Contains(t, doc["grant_types_supported"], "authorization_code")
	assert.Contains(t, doc["scopes_supported"], "openid")
}

func mustGet(t *testing.T, u string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	return req
}

// TestSameAnswerWhateverTheAddress: a known, an unknown and a disabled
// address get the same page, word for word but for the address itself;
// only the known one gets a mail.
func TestSameAnswerWhateverTheAddress(t *testing.T) {
	t.Parallel()
	pf := newPeopleFixture(t)
	pf.person(t, "known@shop.example", people.Viewer)
	gone := pf.person(t, "gone@shop.example", people.Viewer)
	_, _, err := pf.people.Disable(context.Background(), people.Operator, pf.account, gone.ID)
	require.NoError(t, err)

	r := newRequest()
	answer := func(addr string) (int, string, http.Header) {
		p := pf.askForLink(t, webform.New(t), r, addr)
		return p.StatusCode, strings.ReplaceAll(p.Body, addr, "ADDRESS"), p.Header
	}
	status, known, kh := answer("known@shop.example")
	for _, addr := range []string{"nobody@shop.example", "gone@shop.example"} {
		s, body, h := answer(addr)
		assert.Equal(t, status, s, addr)
		assert.True(t, known == body, "%s gets the page a known address gets", addr)
		assert.Equal(t, kh.Get("Set-Cookie") != "", h.Get("Set-Cookie") != "", addr)
	}
	pf.waitForLink(t, "known@shop.example", 0)
	pf.srvIdle(t)
	assert.Empty(t, pf.mail.to("nobody@shop.example"))
	assert.Empty(t, pf.mail.to("gone@shop.example"))
}

// srvIdle waits until the issuer's mails asked for are all sent (or
// found to be due to nobody).
func (pf *peopleFixture) srvIdle(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool { return authserver.MailsPending(pf.srv) == 0 }, 10*time.Second, 5*time.Millisecond)
}

// TestLinkIsBoundToTheBrowserThatAsked: the link works only where it
// was asked for; elsewhere it is refused and stays good.
func TestLinkIsBoundToTheBrowserThatAsked(t *testing.T) {
	t.Parallel()
	pf := newPeopleFixture(t)
	pf.person(t, "anna@shop.example", people.Owner)
	mine, thief := webform.New(t), webform.New(t)
	pf.askForLink(t, mine, newRequest(), "anna@shop.example")
	link := pf.waitForLink(t, "anna@shop.example", 0)

	p := thief.Get(link)
	assert.Equal(t, http.StatusForbidden, p.StatusCode)
	assert.Empty(t, p.Forms(), "no button to press in another browser")
	assert.NotContains(t, p.Body, "anna@shop.example", "nor is the address shown there")
	// Even a forged post from the thief's browser is refused.
	token := strings.SplitN(link, "token=", 2)[1]
	forged := thief.Submit(p, webform.Form{Action: mustURL(t, pf.url+authserver.SignInPath), Method: http.MethodPost,
		Values: url.Values{"token": {token}}}, nil)
	assert.Equal(t, http.StatusForbidden, forged.StatusCode)

	back := pf.signIn(t, mine, link)
	assert.Equal(t, http.StatusSeeOther, back.StatusCode, "still good in its own browser")
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

// TestPrefetchingDoesNotSpendTheLink: a mail scanner fetching the link,
// with or without the cookie, changes nothing; only the page's own post
// signs in, and only once.
func TestPrefetchingDoesNotSpendTheLink(t *testing.T) {
	t.Parallel()
	pf := newPeopleFixture(t)
	pf.person(t, "anna@shop.example", people.Owner)
	b := webform.New(t)
	pf.askForLink(t, b, newRequest(), "anna@shop.example")
	link := pf.waitForLink(t, "anna@shop.example", 0)

	for range 3 {
		_, err := http.Get(link) // the scanner
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, b.Get(link).StatusCode) // the person's own preview
	}
	p := b.Get(link)
	assert.Contains(t, webform.Text(p.Doc), "anna@shop.example", "the page says who signs in")
	back := b.Submit(p, p.Form(t, authserver.SignInPath), nil)
	require.Equal(t, http.StatusSeeOther, back.StatusCode)

	again := b.Submit(p, p.Form(t, authserver.SignInPath), nil)
	assert.Equal(t, http.StatusGone, again.StatusCode, "used once")
	assert.Equal(t, http.StatusGone, b.Get(link).StatusCode)
}

func TestLinkExpiresAfterFifteenMinutes(t *testing.T) {
	t.Parallel()
	pf := newPeopleFixture(t)
	pf.person(t, "anna@shop.example", people.Owner)
	b := webform.New(t)
	pf.askForLink(t, b, newRequest(), "anna@shop.example")
	link := pf.waitForLink(t, "anna@shop.example", 0)
	page := b.Get(link)
	require.Equal(t, http.StatusOK, page.StatusCode)
	pf.clock.Advance(authserver.LinkLifetime)
	assert.Equal(t, http.StatusGone, b.Get(link).StatusCode)
	assert.Equal(t, http.StatusGone, b.Submit(page, page.Form(t, authserver.SignInPath), nil).StatusCode)
}

// TestFormsComeFromTheIssuersOwnPages: a post with another origin, or
// none, neither asks for a link nor signs in.
func TestFormsComeFromTheIssuersOwnPages(t *testing.T) {
	t.Parallel()
	pf := newPeopleFixture(t)
	pf.person(t, "anna@shop.example", people.Owner)
	b := webform.New(t)
	page := b.Get(pf.authorizeURL(newRequest()))
	form := page.Form(t, authserver.AuthorizePath)
	form.Values.Set("email", "anna@shop.example")
	for _, origin := range []string{"https://evil.example", ""} {
		req, err := http.NewRequest(http.MethodPost, form.Action.String(), strings.NewReader(form.Values.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		p := b.Do(req)
		assert.Equal(t, http.StatusForbidden, p.StatusCode, "Origin %q", origin)
	}
	pf.srvIdle(t)
	assert.Zero(t, pf.mail.count(), "no mail for a forged post")
}

func TestAuthorizationRequestsAreChecked(t *testing.T) {
	t.Parallel()
	pf := newPeopleFixture(t)
	r := newRequest()
	good := mustURL(t, pf.authorizeURL(r)).Query()
	with := func(change func(url.Values)) string {
		v := url.Values{}
		for k, vs := range good {
			v[k] = append([]string(nil), vs...)
		}
		change(v)
		return pf.url + authserver.AuthorizePath + "?" + v.Encode()
	}
	// Nothing goes back to an unknown client or redirect URI: a page says so.
	for name, u := range map[string]string{
		"unknown client":       with(func(v url.Values) { v.Set("client_id", "someone-else") }),
		"unknown redirect URI": with(func(v url.Values) { v.Set("redirect_uri", "https://evil.example/cb") }),
		"no redirect URI":      with(func(v url.Values) { v.Del("redirect_uri") }),
		"repeated client":      with(func(v url.Values) { v.Add("client_id", consoleID) }),
	} {
		p := webform.New(t).Get(u)
		assert.Equal(t, http.StatusBadRequest, p.StatusCode, name)
		assert.Empty(t, p.Header.Get("Location"), name)
	}
	// The rest is refused back to the console, with its state.
	for name, tc := range map[string]struct {
		change func(url.Values)
		error  string
	}{
		"implicit flow":        {func(v url.Values) { v.Set("response_type", "token") }, "unsupported_response_type"},
		"no openid scope":      {func(v url.Values) { v.Set("scope", "email") }, "invalid_scope"},
		"no PKCE":              {func(v url.Values) { v.Del("code_challenge"); v.Del("code_challenge_method") }, "invalid_request"},
		"plain PKCE":           {func(v url.Values) { v.Set("code_challenge_method", "plain") }, "invalid_request"},
		"malformed challenge":  {func(v url.Values) { v.Set("code_challenge", "short") }, "invalid_request"},
		"no nonce":             {func(v url.Values) { v.Del("nonce") }, "invalid_request"},
		"repeated state":       {func(v url.Values) { v.Add("state", "other") }, "invalid_request"},
		"a state far too long": {func(v url.Values) { v.Set("state", strings.Repeat("s", 600)) }, "invalid_request"},
	} {
		p := webform.New(t).Get(with(tc.change))
		require.Equal(t, http.StatusSeeOther, p.StatusCode, name)
		to := p.Location()
		assert.Equal(t, consoleCallback, to.Scheme+"://"+to.Host+to.Path, name)
		assert.Equal(t, tc.error, to.Query().Get("error"), name)
		if name != "repeated state" && name != "a state far too long" {
			assert.Equal(t, r.state, to.Query().Get("state"), name)
		}
	}
	p := webform.New(t).Get(with(func(v url.Values) { v.Del("state") }))
	assert.Equal(t, "invalid_request", p.Location().Query().Get("error"), "state is required")
}

func TestCodeTradesOnlyWithItsVerifierClientAndRedirect(t *testing.T) {
	t.Parallel()
	pf := newPeopleFixture(t)
	pf.person(t, "anna@shop.example", people.Owner)
	code := func() (string, request) {
		pf.clock.Advance(13 * time.Minute) // within the limits of asks and mails
		b, r := webform.New(t), newRequest()
		n := len(pf.mail.to("anna@shop.example"))
		pf.askForLink(t, b, r, "anna@shop.example")
		back := pf.signIn(t, b, pf.waitForLink(t, "anna@shop.example", n))
		require.Equal(t, http.StatusSeeOther, back.StatusCode)
		return back.Location().Query().Get("code"), r
	}
	for name, tc := range map[string]struct {
		change func(f url.Values, r request)
		status int
		error  string
	}{
		"another verifier":     {func(f url.Values, _ request) { f.Set("code_verifier", oauth2.GenerateVerifier()) }, 400, "invalid_grant"},
		"another redirect URI": {func(f url.Values, _ request) { f.Set("redirect_uri", consoleCallback+"x") }, 400, "invalid_grant"},
		"another client":       {func(f url.Values, _ request) { f.Set("client_id", "someone-else") }, 401, "invalid_client"},
		"a client secret":      {func(f url.Values, _ request) { f.Set("client_secret", "x") }, 401, "invalid_client"},
		"a short verifier":     {func(f url.Values, _ request) { f.Set("code_verifier", "abc") }, 400, "invalid_request"},
		"no verifier":          {func(f url.Values, _ request) { f.Del("code_verifier") }, 400, "invalid_request"},
	} {
		c, r := code()
		f := codeForm(c, r.verifier)
		tc.change(f, r)
		resp, body := pf.trade(t, f)
		assert.Equal(t, tc.status, resp.StatusCode, name)
		assert.Equal(t, tc.error, body["error"], name)
		if tc.error == "invalid_grant" {
			resp, _ = pf.trade(t, codeForm(c, r.verifier))
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: a code tried wrongly is spent", name)
		}
	}
	c, r := code()
	pf.clock.Advance(61 * time.Second)
	resp, body := pf.trade(t, codeForm(c, r.verifier))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "invalid_grant", body["error"], "a code lives a minute")
}

// TestAskingIsLimited: per client address, per address asked for, and
// mails per person per hour.
func TestAskingIsLimited(t *testing.T) {
	t.Parallel()
	pf := newPeopleFixture(t)
	pf.person(t, "anna@shop.example", people.Owner)
	b := webform.New(t)
	ask := func(addr string) *webform.Page { return pf.askForLink(t, b, newRequest(), addr) }

	for i := range 5 {
		require.Equal(t, http.StatusOK, ask("nobody@shop.example").StatusCode, "ask %d", i)
	}
	p := ask("nobody@shop.example")
	assert.Equal(t, http.StatusTooManyRequests, p.StatusCode, "5 asks for one address, then one every 2 minutes")
	assert.Equal(t, "120", p.Header.Get("Retry-After"))
	for i := range 14 { // 6 asked so far; the address's bucket holds 20
		require.Equal(t, http.StatusOK, ask("other"+string(rune('a'+i))+"@shop.example").StatusCode, "ask %d", i)
	}
	p = ask("one.more@shop.example")
	assert.Equal(t, http.StatusTooManyRequests, p.StatusCode, "20 asks from one client address")

	// Mails: at most 5 an hour to one person, however the asks are spread.
	pf2 := newPeopleFixture(t)
	pf2.person(t, "anna@shop.example", people.Owner)
	for i := range 7 {
		pf2.clock.Advance(3 * time.Minute) // the ask limits refill
		require.Equal(t, http.StatusOK, pf2.askForLink(t, webform.New(t), newRequest(), "anna@shop.example").StatusCode, "ask %d", i)
		pf2.srvIdle(t)
	}
	assert.Len(t, pf2.mail.to("anna@shop.example"), authserver.MailsPerHour)
}

// TestSignInPagesInEveryLanguage: the page asking for the address, in
// each of the six languages, is a form that works without script: a
// labelled email field, the request's parameters carried along, one
// submit button; its errors follow the GOV.UK pattern.
func TestSignInPagesInEveryLanguage(t *testing.T) {
	t.Parallel()
	pf := newPeopleFixture(t)
	titles := map[string]bool{}
	for _, lang := range []string{"en", "de", "da", "fr", "es", "nl"} {
		b := webform.New(t)
		b.Header.Set("Accept-Language", lang)
		p := b.Get(pf.authorizeURL(newRequest()))
		require.Equal(t, http.StatusOK, p.StatusCode)
		assert.Equal(t, lang, webform.Attr(webform.Find(p.Doc, func(n *html.Node) bool { return n.DataAtom == atom.Html })[0], "lang"))
		titles[p.Title()] = true
		assert.Empty(t, webform.Find(p.Doc, func(n *html.Node) bool { return n.DataAtom == atom.Script }), "no script")
		assert.Contains(t, p.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
		assert.NotContains(t, p.Header.Get("Content-Security-Policy"), "script-src")
		email := webform.Find(p.Doc, func(n *html.Node) bool { return webform.Attr(n, "name") == "email" })
		require.Len(t, email, 1)
		assert.Equal(t, "email", webform.Attr(email[0], "type"))
		assert.Equal(t, "email", webform.Attr(email[0], "autocomplete"))
		labels := webform.Find(p.Doc, func(n *html.Node) bool { return n.DataAtom == atom.Label && webform.Attr(n, "for") == "email" })
		require.Len(t, labels, 1, "the field has its label")
		assert.NotEmpty(t, webform.Text(labels[0]))
		assert.Equal(t, "S256", p.Form(t, authserver.AuthorizePath).Values.Get("code_challenge_method"))

		bad := b.Submit(p, p.Form(t, authserver.AuthorizePath), map[string]string{"email": "not an address"})
		assert.Equal(t, http.StatusBadRequest, bad.StatusCode)
		summary := webform.Find(bad.Doc, func(n *html.Node) bool { return webform.Attr(n, "class") == "error-summary" })
		require.Len(t, summary, 1)
		links := webform.Find(summary[0], func(n *html.Node) bool { return n.DataAtom == atom.A })
		require.Len(t, links, 1)
		assert.Equal(t, "#email", webform.Attr(links[0], "href"), "the summary links to the field")
		kept := webform.Find(bad.Doc, func(n *html.Node) bool { return webform.Attr(n, "name") == "email" })
		assert.Equal(t, "not an address", webform.Attr(kept[0], "value"), "the input is kept")
		assert.Equal(t, "true", webform.Attr(kept[0], "aria-invalid"))
	}
	assert.Len(t, titles, 6, "six languages, six titles")

	b := webform.New(t)
	p := b.Get(pf.authorizeURL(newRequest()) + "&ui_locales=" + url.QueryEscape("nl de"))
	assert.Equal(t, "Inloggen bij Touchpoint", p.Title(), "ui_locales wins over the browser's languages")
}

// TestSignInMailIsInTheAskersLanguage: the mail speaks the page's
// language and never carries the token elsewhere than in its link.
func TestSignInMailIsInTheAskersLanguage(t *testing.T) {
	t.Parallel()
	pf := newPeopleFixture(t)
	pf.person(t, "anna@shop.example", people.Owner)
	b := webform.New(t)
	b.Header.Set("Accept-Language", "de-DE,de;q=0.9")
	pf.askForLink(t, b, newRequest(), "anna@shop.example")
	link := pf.waitForLink(t, "anna@shop.example", 0)
	msg := pf.mail.to("anna@shop.example")[0]
	assert.Equal(t, "Ihr Anmeldelink für Touchpoint", msg.Subject)
	assert.Equal(t, "de", msg.Locale)
	assert.True(t, strings.HasPrefix(msg.EventID, "lnk-"), "the Message-ID names the link, not its token")
	token := strings.SplitN(link, "token=", 2)[1]
	assert.NotContains(t, msg.EventID, token)
	sum := sha256.Sum256([]byte(token))
	var stored int
	require.NoError(t, pf.st.DB().Get(&stored, `SELECT count(*) FROM sign_in_links WHERE token_hash = $1`, sum[:]))
	assert.Equal(t, 1, stored, "the link is stored as its hash")
	require.NoError(t, pf.st.DB().Get(&stored, `SELECT count(*) FROM sign_in_links WHERE token_hash = $1`, []byte(token)))
	assert.Zero(t, stored)
}
