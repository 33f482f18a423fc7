package console_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/browsertest"
	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
)

// waitFor polls a JavaScript condition in the tab until it holds.
// A page that is navigating away answers nothing: that is waited out too.
func waitFor(t *testing.T, tab context.Context, js string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](js))
		assert.NoError(c, err)
		assert.True(c, ok, "waiting for %s", js)
	}, 20*time.Second, 50*time.Millisecond)
}

// clear empties a field, as selecting its text and deleting it would.
func clear(id string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](`(document.getElementById(`+strconv.Quote(id)+`).value = '', true)`)(ctx, t)
		return err
	})
}

// acceptConfirms makes the page's confirm dialogs answer yes, as a person
// clicking OK would.
const acceptConfirms = `window.confirm = () => true; true`

// TestWalk goes through each page's main action in Chromium, as a person
// would with the keyboard and the page's own script under its
// Content-Security-Policy: the skip link, a reply published, an invite
// found by the customer's address and followed to its workflow, a
// template's live preview following the text typed, the contrast advice
// following the colour typed, an endpoint added with its secret shown, a
// suppression lifted after the confirmation, an invite cancelled.
func TestWalk(t *testing.T) {
	b := browsertest.Start(t)
	s, pages := seeded(t)

	t.Run("skip link", func(t *testing.T) {
		tab := s.open(t, b, viewerA, "/console/", 1280, "light", "en")
		require.NoError(t, chromedp.Do(tab, chromedp.KeyEvent(kb.Tab)))
		assert.Equal(t, "skip", browsertest.Eval[string](t, tab, `document.activeElement.className`))
		assert.True(t, browsertest.Eval[bool](t, tab, `document.activeElement.getBoundingClientRect().top >= 0`), "visible when focused")
		assert.NotEqual(t, "none", browsertest.Eval[string](t, tab, `getComputedStyle(document.activeElement).outlineStyle`), "with a visible focus")
		require.NoError(t, chromedp.Do(tab, browsertest.Enter()))
		waitFor(t, tab, `document.activeElement.id === 'main'`)
	})

	t.Run("reply", func(t *testing.T) {
		tab := s.open(t, b, editorA, pages["review"], 360, "dark", "en")
		require.NoError(t, chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("text"), "Sorry about the sole: a new pair is on its way."),
			chromedp.Click(chromedp.CSS(`form[action$="/reply"] button[type=submit]`))))
		waitFor(t, tab, `!!document.querySelector('[role=status]')`)
		assert.Contains(t, browsertest.Eval[string](t, tab, `document.querySelector('.reply').textContent`), "a new pair is on its way")
	})

	t.Run("invite to workflow", func(t *testing.T) {
		tab := s.open(t, b, viewerA, "/console/invites", 360, "light", "en")
		require.NoError(t, chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("q"), "greta.zimmermann@example.com"), browsertest.Enter()))
		waitFor(t, tab, `!!document.querySelector('a[href^="/console/invites/evt-"]')`)
		require.NoError(t, chromedp.Do(tab, chromedp.Click(chromedp.CSS(`a[href^="/console/invites/evt-"]`))))
		waitFor(t, tab, `!!document.getElementById('attempts-h')`)
		href := browsertest.Eval[string](t, tab, `document.querySelector('a[href*="/workflows/"]').href`)
		id := strings.TrimPrefix(pages["invite"], "/console/invites/")
		assert.Equal(t, "http://localhost:8233/namespaces/default/workflows/"+id, href)
	})

	t.Run("template live preview", func(t *testing.T) {
		tab := s.open(t, b, editorA, pages["template"], 1280, "light", "en")
		require.NoError(t, chromedp.Do(tab, clear("heading"),
			chromedp.SendKeys(chromedp.ID("heading"), "Hallo {{firstName}}")))
		waitFor(t, tab, `[...document.querySelectorAll('iframe[data-preview-frame]')].every(f => f.src.includes('draft=1') && f.src.includes('Hallo'))`)
		src := browsertest.Eval[string](t, tab, `document.querySelector('iframe[data-preview-frame]').src`)
		u, err := url.Parse(src)
		require.NoError(t, err)
		assert.Equal(t, "Hallo {{firstName}}", u.Query().Get("heading"))
	})

	t.Run("contrast advice", func(t *testing.T) {
		tab := s.open(t, b, ownerA, "/console/settings", 360, "dark", "en")
		require.NoError(t, chromedp.Do(tab, clear("color"), chromedp.SendKeys(chromedp.ID("color"), "#FDE047")))
		waitFor(t, tab, `document.getElementById('color-advice').textContent.includes('dark text')`)
	})

	t.Run("webhook endpoint", func(t *testing.T) {
		tab := s.open(t, b, ownerA, "/console/webhooks", 1280, "light", "en")
		require.NoError(t, chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("url"), "https://erp.nordlicht.example/hooks"),
			chromedp.Click(chromedp.CSS(`input[value="review.created"]`)), chromedp.Click(chromedp.CSS(`form[action$="/webhooks"] button[type=submit]`))))
		waitFor(t, tab, `!!document.getElementById('new-secret')`)
		assert.True(t, strings.HasPrefix(browsertest.Eval[string](t, tab, `document.getElementById('new-secret').textContent`), "whsec_"))
	})

	t.Run("lift a suppression", func(t *testing.T) {
		tab := s.open(t, b, ownerA, pages["suppression"], 1280, "light", "en")
		browsertest.Eval[bool](t, tab, acceptConfirms)
		require.NoError(t, chromedp.Do(tab, chromedp.Click(chromedp.CSS(`form[action$="/suppressions/lift"] button`))))
		waitFor(t, tab, `!!document.querySelector('[role=status]') && document.body.textContent.includes('not on the suppression list')`)
	})

	t.Run("cancel an invite", func(t *testing.T) {
		id := s.a.Event(t, eventfixtureEvent())
		tab := s.open(t, b, editorA, "/console/invites/"+id, 360, "light", "en")
		browsertest.Eval[bool](t, tab, acceptConfirms)
		require.NoError(t, chromedp.Do(tab, chromedp.Click(chromedp.CSS(`form[action$="/cancel"] button`))))
		waitFor(t, tab, `!!document.querySelector('[role=status]')`)
		var st string
		require.NoError(t, s.db.Get(&st, `SELECT invite_status FROM events WHERE id = $1`, id))
		assert.Equal(t, "cancelled", st)
	})
}

// eventfixtureEvent is a pending invite of the account.
func eventfixtureEvent() eventfixture.Event {
	return eventfixture.Event{Email: "jonas@example.com", Status: invite.Pending}
}
