package console_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/console"
	"github.com/touchpoint/touchpoint/internal/browsertest"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// signIn makes the tab's requests to the site the person's.
func (s *site) signIn(person string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		u, _ := url.Parse(s.URL)
		_, err := cdp.Call(ctx, t, network.SetCookie, network.SetCookieParams{Name: testCookie, Value: person, Domain: u.Hostname(), Path: "/"})
		return err
	})
}

// open loads a page of the site in a tab as the person, at a width and
// in a colour scheme.
func (s *site) open(t *testing.T, b *browsertest.Browser, person, path string, width int, scheme, lang string) context.Context {
	t.Helper()
	tab := b.Tab(t)
	require.NoError(t, chromedp.Do(tab,
		s.signIn(person),
		browsertest.ColorScheme(scheme),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": lang}})
			return err
		}),
		chromedp.EmulateViewport(int64(width), 800),
		chromedp.Navigate(s.URL+path),
	))
	return tab
}

// seeded is a site with something on every page, as a shop would have.
func seeded(t *testing.T) (*site, map[string]string) {
	s := newSite(t, func(o *console.Options) {
		o.TemporalUIURL, o.Namespace = "http://localhost:8233", "default"
	})
	name, colour := "Nordlicht Outdoor", "#14532D"
	_, err := s.st.Accounts.UpdateBranding(context.Background(), s.a.AccountID, accountdb.BrandingUpdate{DisplayName: &name, BrandColor: &colour})
	require.NoError(t, err)
	low := s.reviewed(t, s.a, 2, "The sole came off after two weeks of hiking in the Alps. Not what I expect of a trail shoe at this price.",
		storeRating(0, 2, "Sole came off"))
	s.reviewed(t, s.a, 5, "Fast delivery, great fit.")
	s.reviewed(t, s.a, 4, "")
	answered := s.reviewed(t, s.a, 5, "Wonderful service, thank you!")
	_, _, err = s.st.Reviews.SetReply(context.Background(), s.a.AccountID, answered.ID, "Thank you, Greta! Enjoy your hikes.", editorA)
	require.NoError(t, err)
	inv := s.sentInvite(t, s.a, "greta.zimmermann@example.com")
	ep, err := s.st.Webhooks.CreateWebhookEndpoint(context.Background(), webhookdb.WebhookEndpoint{ID: store.NewID("whk"), AccountID: s.a.AccountID,
		URL: "https://hooks.nordlicht.example/touchpoint", Events: []string{"review.created", "invite.sent"}, Secret: []byte("sealed")})
	require.NoError(t, err)
	s.delivery(t, s.a.AccountID, ep.ID, "failed", time.Now().Add(-time.Hour))
	s.delivery(t, s.a.AccountID, ep.ID, "succeeded", time.Now().Add(-2*time.Hour))
	return s, map[string]string{
		"invites":      "/console/invites?q=greta.zimmermann%40example.com",
		"invite":       "/console/invites/" + inv,
		"suppressions": "/console/suppressions",
		"templates":    "/console/templates",
		"webhooks":     "/console/webhooks",
		"settings":     "/console/settings",
		"webhook":      "/console/webhooks/" + ep.ID,
		"template":     "/console/templates/invite/en",
		"sms-template": "/console/templates/sms_reminder/en",
		"suppression":  "/console/suppressions?address=greta.zimmermann%40example.com",
		"overview":     "/console/",
		"reviews":      "/console/reviews",
		"review":       "/console/reviews/" + low.ID,
		"answered":     "/console/reviews/" + answered.ID,
		"filtered":     "/console/reviews?rating=9",
	}
}

// testLanguages are the two languages the pages are checked in.
var testLanguages = []string{"en", "de"}

// TestAccessibility runs axe-core over every page of the console in two
// languages, at 360 and 1280 px, light and dark: no violation, and
// nothing makes the reader scroll sideways.
func TestAccessibility(t *testing.T) {
	b := browsertest.Start(t)
	s, pages := seeded(t)
	for name, path := range pages {
		for _, lang := range testLanguages {
			for _, width := range []int{360, 1280} {
				for _, scheme := range []string{"light", "dark"} {
					t.Run(fmt.Sprintf("%s/%s/%d/%s", name, lang, width, scheme), func(t *testing.T) {
						tab := s.open(t, b, ownerA, path, width, scheme, lang)
						assert.Equal(t, lang, browsertest.Eval[string](t, tab, `document.documentElement.lang`))
						for _, v := range browsertest.Axe(t, tab) {
							t.Errorf("axe: %s", v)
						}
						assert.Zero(t, browsertest.Eval[int](t, tab, browsertest.Overflow), "sideways scroll")
					})
				}
			}
		}
	}
}

// TestScreenshots photographs the pages docs/console.md shows; with
// TOUCHPOINT_CONSOLE_DOCS=1 it writes them into docs/.
func TestScreenshots(t *testing.T) {
	b := browsertest.Start(t)
	s, pages := seeded(t)
	dir := browsertest.Dir(t)
	if os.Getenv("TOUCHPOINT_CONSOLE_DOCS") == "1" {
		dir = filepath.Join("..", "docs")
	}
	// Cookies are the browser's: once set in one tab, the screenshots'
	// tabs are signed in too.
	require.NoError(t, chromedp.Do(b.Tab(t), s.signIn(editorA), chromedp.Navigate(s.URL+"/console/")))
	for _, shot := range []struct {
		name, page string
		widths     []int
	}{
		{"overview", "overview", []int{1280, 360}},
		{"review", "answered", []int{1280, 360}},
		{"invite", "invite", []int{1280, 360}},
		{"template-editor", "template", []int{1280}},
	} {
		for _, w := range shot.widths {
			b.ScreenshotTo(t, s.URL+pages[shot.page], w, 1, filepath.Join(dir, fmt.Sprintf("console-%s-%d.png", shot.name, w)))
		}
	}
}

func storeRating(index, rating int, comment string) reviewdb.ProductRating {
	return reviewdb.ProductRating{Index: index, Rating: rating, Comment: comment}
}
