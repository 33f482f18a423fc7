package signin_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/console/signin"
	"github.com/touchpoint/touchpoint/internal/browsertest"
	"github.com/touchpoint/touchpoint/internal/oidctest"
	"github.com/touchpoint/touchpoint/people"
)

// look checks the page the tab shows: no axe-core violation, nothing
// wider than the viewport, at 360 and 1280 px, light and dark; and keeps
// a picture of each.
func look(t *testing.T, tab context.Context, name string) {
	t.Helper()
	for _, scheme := range []string{"light", "dark"} {
		for _, width := range []int64{360, 1280} {
			require.NoError(t, chromedp.Do(tab, browsertest.ColorScheme(scheme), chromedp.EmulateViewport(width, 800)))
			assert.Empty(t, browsertest.Axe(t, tab), "%s at %d px, %s", name, width, scheme)
			assert.Zero(t, browsertest.Eval[int](t, tab, browsertest.Overflow), "%s at %d px scrolls sideways", name, width)
			browsertest.Capture(t, tab, fmt.Sprintf("%s-%s-%d-%s", t.Name(), name, width, scheme))
		}
	}
	require.NoError(t, chromedp.Do(tab, browsertest.ColorScheme("light")))
}

func location(t *testing.T, tab context.Context) string {
	t.Helper()
	loc, err := chromedp.Run(tab, chromedp.Location())
	require.NoError(t, err)
	return loc
}

// submit clicks the page's one submit button and returns the answer the
// tab ends on.
func submit(t *testing.T, tab context.Context) *network.Response {
	t.Helper()
	resp, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`button[type=submit]`)))
	require.NoError(t, err)
	return resp
}

// TestBrowserSignsInThroughTheBuiltInIssuer: in Chromium, a person opens
// a page of the console, is sent to the issuer, gives their address,
// opens the link of the mail, confirms, and lands signed in on the page
// they opened; the session cookie is HttpOnly, the pages of the way
// accessible at 360 and 1280 px.
func TestBrowserSignsInThroughTheBuiltInIssuer(t *testing.T) {
	b := browsertest.Start(t)
	g := builtIn(t)
	g.person("anna@shop.example", people.Editor)
	tab := b.Tab(t)
	require.NoError(t, chromedp.Do(tab, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(g.url+"/console/reviews")))
	assert.Contains(t, location(t, tab), authserver.AuthorizePath, "sent to the issuer")
	look(t, tab, "ask")

	require.NoError(t, chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS(`#email`), "anna@shop.example")))
	resp := submit(t, tab)
	assert.EqualValues(t, http.StatusOK, resp.Status)
	assert.Equal(t, "Check your email", browsertest.Eval[string](t, tab, `document.querySelector('h1').textContent`))
	look(t, tab, "sent")

	link := g.mailedLink(0)
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(link)))
	assert.Contains(t, browsertest.Eval[string](t, tab, `document.querySelector('main').textContent`), "anna@shop.example")
	look(t, tab, "confirm")

	resp = submit(t, tab)
	assert.EqualValues(t, http.StatusOK, resp.Status)
	assert.Equal(t, g.url+"/console/reviews", location(t, tab), "back on the page the person opened")
	assert.Contains(t, browsertest.Eval[string](t, tab, `document.querySelector('.who').textContent`), "anna@shop.example")
	var session *network.Cookie
	for _, c := range cookiesOf(t, tab) {
		if c.Name == "tp-console" {
			session = c
		}
	}
	require.NotNil(t, session)
	assert.True(t, session.HTTPOnly, "no script reads the session")
	assert.Equal(t, network.CookieSameSiteLax, session.SameSite)
	look(t, tab, "signed-in")

	// Sign out with the page's own button.
	resp, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(`form[action="`+signin.SignOutPath+`"] button`)))
	require.NoError(t, err)
	assert.EqualValues(t, http.StatusOK, resp.Status)
	look(t, tab, "signed-out")

	// The link is spent: opened again, it says so.
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(link)))
	look(t, tab, "dead-link")
}

// TestBrowserSignsInThroughAnExternalProvider: in Chromium, over https,
// a person linked to the shop's own provider signs in; the session
// cookie is Secure and __Host- prefixed.
func TestBrowserSignsInThroughAnExternalProvider(t *testing.T) {
	b := browsertest.Start(t)
	g := external(t, false)
	anna := g.person("anna@shop.example", people.Owner)
	require.NoError(t, g.ps.Link(context.Background(), people.Operator, g.account, anna.ID, g.provider.Issuer(), "kc-anna"))
	g.provider.SignIn(oidctest.User{Subject: "kc-anna"})
	tab := b.Tab(t)
	resp, err := chromedp.RunResponse(tab, chromedp.Navigate(g.url+"/console/"))
	require.NoError(t, err)
	assert.EqualValues(t, http.StatusOK, resp.Status)
	assert.Equal(t, g.url+"/console/", location(t, tab))
	assert.Contains(t, browsertest.Eval[string](t, tab, `document.querySelector('.who').textContent`), "anna@shop.example")
	var session *network.Cookie
	for _, c := range cookiesOf(t, tab) {
		if c.Name == "__Host-tp-console" {
			session = c
		}
	}
	require.NotNil(t, session, "the session cookie is __Host- prefixed under https")
	assert.True(t, session.Secure)
	assert.True(t, session.HTTPOnly)

	// Someone the provider knows but the shop has not let in.
	g.provider.SignIn(oidctest.User{Subject: "kc-stranger"})
	tab = b.Tab(t)
	require.NoError(t, chromedp.Do(tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.ClearBrowserCookies, cdp.Empty{}) // another person's browser
		return err
	})))
	resp, err = chromedp.RunResponse(tab, chromedp.Navigate(g.url+"/console/"))
	require.NoError(t, err)
	assert.EqualValues(t, http.StatusForbidden, resp.Status)
	look(t, tab, "not-linked")
}

// cookiesOf are the cookies the tab's page would send.
func cookiesOf(t *testing.T, tab context.Context) []*network.Cookie {
	t.Helper()
	var out []*network.Cookie
	require.NoError(t, chromedp.Do(tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		res, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{})
		out = res.Cookies
		return err
	})))
	return out
}
