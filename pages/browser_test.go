package pages_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/internal/browsertest"
	"github.com/touchpoint/touchpoint/pages"
)

// site serves every page the way the API will: the feedback form, its
// post, and the rest, with the shop's logo and product pictures from a
// separate https server (the pages allow https images only).
type site struct {
	*httptest.Server
	mu           sync.Mutex
	reviews      []pages.FeedbackForm
	unsubscribes []string // the bodies posted to /unsubscribe
}

const (
	siteEvent = "evt-3f1c2a9e-7b4d-4c1a-9e2f-0a1b2c3d4e5f"
	siteSig   = "q9Xc2LrT0vW8mYpA1bZk3nH5sJ7dF4gE6uI0oP2aQwE"
)

func newSite(t *testing.T, p *pages.Pages) *site {
	t.Helper()
	assets := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		svg, ok := assetSVG[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/svg+xml")
		fmt.Fprint(w, svg)
	}))
	t.Cleanup(assets.Close)
	shop := brand.Brand{DisplayName: "Nordlicht Outdoor", LogoURL: assets.URL + "/logo.svg", Color: "#14532D", ReplyTo: "hilfe@nordlicht.example"}
	products := []pages.Product{
		{Name: "Trail shoe Fjell, size 42", ImageURL: assets.URL + "/shoe.svg"},
		{Name: "Merino hiking socks (2 pairs)", ImageURL: assets.URL + "/socks.svg", Index: 1},
	}
	feedback := func(locale string) pages.FeedbackView {
		return pages.FeedbackView{Locale: locale, Brand: shop, Products: products, Action: "/feedback?lang=" + locale, EventID: siteEvent, Sig: siteSig}
	}
	s := &site{}
	check := func(err error) {
		if err != nil {
			t.Errorf("render: %v", err)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /feedback", func(w http.ResponseWriter, r *http.Request) {
		v := feedback(r.FormValue("lang"))
		if r.FormValue("errors") != "" {
			v.Comment = "Die Sohle ist super, aber die Schnürsenkel sind zu kurz."
			v.Errors = []pages.FieldError{{Field: pages.FieldRating, Code: pages.CodeRatingRequired}}
			check(p.Feedback(w, http.StatusBadRequest, v))
			return
		}
		check(p.Feedback(w, http.StatusOK, v))
	})
	mux.HandleFunc("POST /feedback", func(w http.ResponseWriter, r *http.Request) {
		locale := r.URL.Query().Get("lang")
		f, errs, err := pages.ParseFeedback(r)
		if err != nil {
			check(p.BadRequest(w, locale))
			return
		}
		if f.EventID != siteEvent || f.Sig != siteSig {
			check(p.NotFound(w, locale))
			return
		}
		if len(errs) > 0 {
			v := feedback(locale)
			v.Rating, v.Comment, v.Errors = f.Rating, f.Comment, errs
			check(p.Feedback(w, http.StatusBadRequest, v))
			return
		}
		s.mu.Lock()
		s.reviews = append(s.reviews, f)
		s.mu.Unlock()
		check(p.Thanks(w, pages.ThanksView{Locale: locale, Brand: shop, Rating: f.Rating, EditURL: "/feedback?event=" + f.EventID + "&sig=" + f.Sig}))
	})
	mux.HandleFunc("GET /thanks", func(w http.ResponseWriter, r *http.Request) {
		check(p.Thanks(w, pages.ThanksView{Locale: r.FormValue("lang"), Brand: shop, Rating: 4, EditURL: "/feedback"}))
	})
	mux.HandleFunc("GET /notfound", func(w http.ResponseWriter, r *http.Request) { check(p.NotFound(w, r.FormValue("lang"))) })
	mux.HandleFunc("GET /expired", func(w http.ResponseWriter, r *http.Request) {
		check(p.Expired(w, pages.ExpiredView{Locale: r.FormValue("lang"), Brand: shop}))
	})
	mux.HandleFunc("GET /badrequest", func(w http.ResponseWriter, r *http.Request) { check(p.BadRequest(w, r.FormValue("lang"))) })
	mux.HandleFunc("GET /methodnotallowed", func(w http.ResponseWriter, r *http.Request) {
		check(p.MethodNotAllowed(w, r.FormValue("lang"), []string{http.MethodGet, http.MethodPost}))
	})
	mux.HandleFunc("GET /unsubscribe", func(w http.ResponseWriter, r *http.Request) {
		check(p.Unsubscribe(w, http.StatusOK, pages.UnsubscribeView{Locale: r.FormValue("lang"), Brand: shop,
			Action: "/unsubscribe?lang=" + r.FormValue("lang") + "&event=" + siteEvent, Address: "j•••@example.com"}))
	})
	mux.HandleFunc("POST /unsubscribe", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			check(p.BadRequest(w, ""))
			return
		}
		s.mu.Lock()
		s.unsubscribes = append(s.unsubscribes, r.PostForm.Encode())
		s.mu.Unlock()
		check(p.Unsubscribed(w, pages.UnsubscribedView{Locale: r.URL.Query().Get("lang"), Brand: shop}))
	})
	mux.HandleFunc("GET /unsubscribed", func(w http.ResponseWriter, r *http.Request) {
		check(p.Unsubscribed(w, pages.UnsubscribedView{Locale: r.FormValue("lang"), Brand: shop}))
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// sitePages are the paths of every page, as the reader meets them.
var sitePages = []string{"/feedback", "/feedback?errors=1", "/thanks", "/unsubscribe", "/unsubscribed", "/notfound", "/expired", "/badrequest", "/methodnotallowed"}

func (s *site) url(path, lang string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return s.URL + path + sep + "lang=" + lang
}

var assetSVG = map[string]string{
	"/logo.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="252" height="48" viewBox="0 0 252 48">` +
		`<circle cx="24" cy="24" r="22" fill="#14532D"/>` +
		`<path d="M6 32 L17 18 L24 26 L30 19 L42 32 Z" fill="#fff"/>` +
		`<path d="M9 14 C16 8 30 8 39 13" stroke="#86efac" stroke-width="3" fill="none" stroke-linecap="round"/>` +
		`<text x="56" y="31" textLength="112" lengthAdjust="spacingAndGlyphs" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="21" font-weight="700" fill="#14532D">Nordlicht</text>` +
		`<text x="176" y="31" textLength="74" lengthAdjust="spacingAndGlyphs" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="12" fill="#3f6212">OUTDOOR</text></svg>`,
	"/shoe.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="112" height="112" viewBox="0 0 112 112">` +
		`<rect width="112" height="112" fill="#e7efe9"/>` +
		`<path d="M16 70 C16 60 26 54 36 54 L50 54 C57 54 59 42 66 42 L74 42 C80 42 83 54 91 59 C97 63 97 72 93 76 L20 76 C17 76 16 73 16 70 Z" fill="#14532D"/>` +
		`<rect x="15" y="76" width="80" height="9" rx="4" fill="#1f2937"/>` +
		`<path d="M58 50 L70 56 M55 56 L67 62" stroke="#d9f99d" stroke-width="3" stroke-linecap="round"/></svg>`,
	"/socks.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="112" height="112" viewBox="0 0 112 112">` +
		`<rect width="112" height="112" fill="#f5ede4"/>` +
		`<path d="M44 18 L66 18 L66 60 C66 68 72 72 80 76 C91 81 89 96 76 96 C66 96 55 92 47 86 C40 81 44 70 44 60 Z" fill="#9a3412"/>` +
		`<rect x="44" y="18" width="22" height="11" fill="#7c2d12"/>` +
		`<path d="M44 40 L66 40 M44 48 L66 48" stroke="#fdba74" stroke-width="3"/></svg>`,
}

// a11yJS is an object with two functions: check() lists accessibility
// violations (language, title, names of controls, fieldsets, images,
// WCAG AA contrast of every visible text against what lies behind it,
// sideways scrolling, target sizes); focus() describes the focused
// element and whether its focus indicator is visible. It runs through
// the DevTools protocol, which the page's Content-Security-Policy does
// not restrict; the page itself has no script.
const a11yJS = `(() => {
  const parse = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c);
    if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const contrast = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const background = (el) => {
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.unshift(e);
    let bg = [255, 255, 255, 1];
    for (const e of chain) { const c = parse(getComputedStyle(e).backgroundColor); if (c[3] > 0) bg = over(c, bg); }
    return bg;
  };
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    return r.width > 1 && r.height > 1 && cs.visibility !== 'hidden' && cs.display !== 'none';
  };
  const name = (e) => {
    let n = e.labels ? Array.from(e.labels).map(l => l.textContent).join(' ') : '';
    if (!n.trim()) n = e.getAttribute('aria-label') || '';
    if (!n.trim() && e.tagName === 'BUTTON') n = e.textContent;
    return n.trim();
  };
  const check = () => {
    const out = [];
    if (!(document.documentElement.getAttribute('lang') || '').trim()) out.push('html has no lang');
    if (!document.title.trim()) out.push('the page has no title');
    if (document.querySelectorAll('h1').length !== 1) out.push('not exactly one h1');
    const ids = new Set();
    for (const e of document.querySelectorAll('[id]')) { if (ids.has(e.id)) out.push('duplicate id ' + e.id); ids.add(e.id); }
    for (const e of document.querySelectorAll('input, textarea, select, button')) {
      if (e.type === 'hidden') continue;
      if (!name(e)) out.push(e.tagName.toLowerCase() + ' ' + (e.id || e.name) + ' has no accessible name');
      if (e.type === 'radio') {
        const fs = e.closest('fieldset'), lg = fs && fs.querySelector(':scope > legend');
        if (!lg || !lg.textContent.trim()) out.push('radio ' + e.id + ' is not in a fieldset with a legend');
      }
      const target = e.type === 'radio' && e.labels.length ? e.labels[0] : e;
      const r = target.getBoundingClientRect();
      if (r.width < 24 || r.height < 24) out.push((e.id || e.name) + ' is a small target: ' + r.width + 'x' + r.height);
    }
    for (const e of document.querySelectorAll('[aria-describedby], [aria-labelledby]')) {
      const refs = ((e.getAttribute('aria-describedby') || '') + ' ' + (e.getAttribute('aria-labelledby') || '')).split(/\s+/).filter(Boolean);
      for (const id of refs) if (!document.getElementById(id)) out.push('aria reference to missing #' + id);
    }
    for (const img of document.images) {
      if (!img.hasAttribute('alt')) out.push('image without alt: ' + img.src);
      if (!img.complete || img.naturalWidth === 0) out.push('image did not load: ' + img.src);
    }
    for (const a of document.querySelectorAll('a')) if (!a.textContent.trim()) out.push('link without text');
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n; (n = walker.nextNode());) {
      const text = n.textContent.trim();
      if (!text) continue;
      const el = n.parentElement;
      if (!shown(el)) continue;
      const cs = getComputedStyle(el);
      const bg = background(el);
      const ratio = contrast(over(parse(cs.color), bg), bg);
      const size = parseFloat(cs.fontSize), weight = parseInt(cs.fontWeight, 10);
      const need = size >= 24 || (weight >= 700 && size >= 18.66) ? 3 : 4.5;
      if (ratio < need) out.push('"' + text.slice(0, 40) + '" has contrast ' + ratio.toFixed(2) + ', needs ' + need);
      if (size < 12) out.push('"' + text.slice(0, 40) + '" is only ' + size + 'px');
    }
    if (document.documentElement.scrollWidth > window.innerWidth) out.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + 'px in ' + window.innerWidth + 'px');
    return out;
  };
  const focus = () => {
    const el = document.activeElement;
    const res = { id: el.id, tag: el.tagName.toLowerCase(), visible: false, contrast: 0 };
    for (const c of [el].concat(el.labels ? Array.from(el.labels) : [])) {
      const cs = getComputedStyle(c);
      if (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2) {
        const bg = background(c.parentElement);
        res.visible = true;
        res.contrast = contrast(over(parse(cs.outlineColor), bg), bg);
        break;
      }
    }
    return res;
  };
  return { check, focus };
})()`

type focused struct {
	ID       string  `json:"id"`
	Tag      string  `json:"tag"`
	Visible  bool    `json:"visible"`
	Contrast float64 `json:"contrast"`
}

// focus returns the focused element after checking that its focus
// indicator is visible and stands out (3:1, WCAG 2.4.11 / 1.4.11).
func focus(t *testing.T, ctx context.Context) focused {
	t.Helper()
	f, err := chromedp.Run(ctx, chromedp.Evaluate[focused](a11yJS+`.focus()`))
	require.NoError(t, err)
	assert.True(t, f.Visible, "the focused %s#%s shows its focus", f.Tag, f.ID)
	assert.GreaterOrEqual(t, f.Contrast, 3.0, "the focus ring of %s#%s stands out", f.Tag, f.ID)
	return f
}

func violations(t *testing.T, ctx context.Context) []string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](a11yJS+`.check()`))
	require.NoError(t, err)
	return v
}

func press(t *testing.T, ctx context.Context, keys ...string) {
	t.Helper()
	for _, k := range keys {
		require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(k)))
	}
}

// TestBrowserKeyboard answers the form with the keyboard alone: Tab into
// the rating, Space to choose, arrow keys to change, Tab to the comment,
// type, Tab to the button, Enter. Every stop shows its focus.
func TestBrowserKeyboard(t *testing.T) {
	b := browsertest.Start(t)
	p := newPages(t)
	s := newSite(t, p)
	for _, width := range []int64{1280, 360} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			ctx := b.Tab(t)
			require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(s.url("/feedback", "en"))))

			press(t, ctx, kb.Tab)
			assert.Equal(t, "rating", focus(t, ctx).ID, "Tab reaches the rating first")
			press(t, ctx, " ")
			assert.Equal(t, "1", browsertest.Eval[string](t, ctx, `document.querySelector('input[name=rating]:checked').value`), "Space chooses")
			press(t, ctx, kb.ArrowRight, kb.ArrowRight, kb.ArrowRight)
			assert.Equal(t, "rating-4", focus(t, ctx).ID)
			assert.Equal(t, "4", browsertest.Eval[string](t, ctx, `document.querySelector('input[name=rating]:checked').value`), "arrow keys change the choice")
			press(t, ctx, kb.ArrowLeft)
			assert.Equal(t, "3", browsertest.Eval[string](t, ctx, `document.querySelector('input[name=rating]:checked').value`))
			press(t, ctx, kb.ArrowRight)

			press(t, ctx, kb.Tab)
			assert.Equal(t, "comment", focus(t, ctx).ID, "one Tab leaves the group for the comment")
			const typed = `Fits well & arrived fast. "</textarea>" <b>`
			require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(typed)))

			// Each product: its rating group, then its comment; then the
			// consent to be named.
			for _, id := range []string{"product-0-rating", "product-0-comment", "product-1-rating", "product-1-comment", "showName"} {
				press(t, ctx, kb.Tab)
				assert.Equal(t, id, focus(t, ctx).ID)
			}
			press(t, ctx, kb.Tab)
			assert.Equal(t, "button", focus(t, ctx).Tag, "then the submit button")
			browsertest.Capture(t, ctx, fmt.Sprintf("feedback-answered-%d", width))
			assert.Empty(t, violations(t, ctx), "with a choice made and focus on the button")

			resp, err := chromedp.RunResponse(ctx, browsertest.Enter())
			require.NoError(t, err)
			assert.EqualValues(t, http.StatusOK, resp.Status)
			assert.Equal(t, "Thank you for your feedback", browsertest.Eval[string](t, ctx, `document.title`))
			assert.Contains(t, browsertest.Eval[string](t, ctx, `document.querySelector('main').innerText`), "Your rating: 4 out of 5 – Good")
			s.mu.Lock()
			last := s.reviews[len(s.reviews)-1]
			s.mu.Unlock()
			assert.Equal(t, pages.FeedbackForm{EventID: siteEvent, Sig: siteSig, Rating: 4, Comment: typed}, last)
		})
	}
}

// TestBrowserErrors posts the form without a rating: the page comes back
// with focus on the error summary, its link takes the reader to the
// rating, and the comment is still there.
func TestBrowserErrors(t *testing.T) {
	b := browsertest.Start(t)
	p := newPages(t)
	s := newSite(t, p)
	ctx := b.Tab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.url("/feedback", "de"))))
	press(t, ctx, kb.Tab, kb.Tab)
	require.Equal(t, "comment", focus(t, ctx).ID)
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent("Gute Beratung, übrigens!")))
	press(t, ctx, kb.Tab)
	resp, err := chromedp.RunResponse(ctx, browsertest.Enter())
	require.NoError(t, err)
	assert.EqualValues(t, http.StatusBadRequest, resp.Status)

	assert.True(t, strings.HasPrefix(browsertest.Eval[string](t, ctx, `document.title`), "Fehler: "))
	f := focus(t, ctx)
	assert.Equal(t, "div", f.Tag, "focus starts on the error summary")
	assert.True(t, browsertest.Eval[bool](t, ctx, `document.activeElement.classList.contains('error-summary')`))
	assert.Equal(t, "Gute Beratung, übrigens!", browsertest.Eval[string](t, ctx, `document.getElementById('comment').value`))
	assert.Empty(t, violations(t, ctx))

	press(t, ctx, kb.Tab)
	assert.Equal(t, "Bitte wählen Sie eine Bewertung von 1 (sehr schlecht) bis 5 (ausgezeichnet)", browsertest.Eval[string](t, ctx, `document.activeElement.textContent`))
	require.NoError(t, chromedp.Do(ctx, browsertest.Enter()))
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, "rating", browsertest.Eval[string](t, ctx, `document.activeElement.id`))
	}, 5*time.Second, 20*time.Millisecond, "the summary's link leads to the rating")
	press(t, ctx, kb.ArrowRight)
	assert.Equal(t, "rating-2", focus(t, ctx).ID)
	s.mu.Lock()
	assert.Empty(t, s.reviews, "nothing stored")
	s.mu.Unlock()
}

// TestBrowserUnsubscribe confirms with the keyboard: the one button
// posts what a mail client's one-click unsubscribe posts.
func TestBrowserUnsubscribe(t *testing.T) {
	b := browsertest.Start(t)
	p := newPages(t)
	s := newSite(t, p)
	ctx := b.Tab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.url("/unsubscribe", "fr"))))
	press(t, ctx, kb.Tab)
	assert.Equal(t, "button", focus(t, ctx).Tag)
	resp, err := chromedp.RunResponse(ctx, browsertest.Enter())
	require.NoError(t, err)
	assert.EqualValues(t, http.StatusOK, resp.Status)
	assert.Equal(t, "Votre désabonnement est confirmé", browsertest.Eval[string](t, ctx, `document.querySelector('h1').textContent`))
	s.mu.Lock()
	assert.Equal(t, []string{"List-Unsubscribe=One-Click"}, s.unsubscribes)
	s.mu.Unlock()
}

// TestBrowserAccessibility checks every page in every locale on a phone
// and on a desktop: no violation, styles applied under the CSP, every
// image loaded.
func TestBrowserAccessibility(t *testing.T) {
	b := browsertest.Start(t)
	p := newPages(t)
	s := newSite(t, p)
	for _, width := range []int64{360, 1280} {
		ctx := b.Tab(t)
		require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(width, 800)))
		for _, locale := range p.Locales() {
			for _, path := range sitePages {
				url := s.url(path, locale)
				require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url)))
				assert.Empty(t, violations(t, ctx), "%s at %dpx", url, width)
				assert.Equal(t, "rgb(246, 248, 250)", browsertest.Eval[string](t, ctx, `getComputedStyle(document.body).backgroundColor`),
					"%s: the CSS applies under the Content-Security-Policy", url)
			}
		}
	}
}

// TestBrowserScreenshots photographs every page in English and German on
// a phone and a desktop (TOUCHPOINT_SCREENSHOT_DIR keeps them).
func TestBrowserScreenshots(t *testing.T) {
	b := browsertest.Start(t)
	p := newPages(t)
	s := newSite(t, p)
	for _, locale := range []string{"en", "de"} {
		for _, path := range sitePages {
			name := strings.NewReplacer("/", "", "?", "-", "=", "-").Replace(path)
			t.Run(locale+"-"+name, func(t *testing.T) {
				for _, width := range []int{360, 1280} {
					shot := b.Screenshot(t, s.url(path, locale), width)
					info, err := os.Stat(shot)
					require.NoError(t, err)
					assert.Greater(t, info.Size(), int64(5000), "a picture of something")
				}
			})
		}
	}
}

// TestBrowserDocsScreenshots refreshes the pictures of the
// feedback page in docs/customer-experience.md when TOUCHPOINT_UPDATE_DOCS is set.
func TestBrowserDocsScreenshots(t *testing.T) {
	if os.Getenv("TOUCHPOINT_UPDATE_DOCS") == "" {
		t.Skip("set TOUCHPOINT_UPDATE_DOCS=1 to refresh docs/feedback-page*.png")
	}
	b := browsertest.Start(t)
	s := newSite(t, newPages(t))
	docs := filepath.Join("..", "docs")
	b.ScreenshotTo(t, s.url("/feedback", "en"), 1280, 1, filepath.Join(docs, "feedback-page.png"))
	b.ScreenshotTo(t, s.url("/feedback", "en"), 360, 2, filepath.Join(docs, "feedback-page-mobile.png"))
}

// TestBrowserCompactProductRatings: each product's five ratings stand in
// one row at 360 and 1280 px (the order's rating stays a list of five
// full-width choices on a phone), so two products no longer make the page
// a long scroll — 2,732 px at 360 px with five full-width rows per
// product, 2,128 px with a row of five; the height is logged. They stay
// radio buttons in a fieldset named by the product, each named by its
// number and word, chosen and changed with the keyboard, their focus
// shown, and the page has no accessibility violation.
func TestBrowserCompactProductRatings(t *testing.T) {
	b := browsertest.Start(t)
	s := newSite(t, newPages(t))
	for _, width := range []int64{360, 1280} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			ctx := b.Tab(t)
			require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(width, 800), chromedp.Navigate(s.url("/feedback", "en"))))
			height := browsertest.Eval[int](t, ctx, `document.documentElement.scrollHeight`)
			t.Logf("the feedback page with two products is %d px tall at %d px", height, width)
			rows := func(name string) int {
				return browsertest.Eval[int](t, ctx, `new Set(Array.from(document.querySelectorAll('input[name="`+name+
					`"]')).map(e => Math.round(e.getBoundingClientRect().top))).size`)
			}
			if width == 360 {
				assert.Equal(t, 5, rows("rating"), "the order's rating: a list of five")
				assert.Less(t, height, 2400, "two products cost a row of five each, not five rows")
			}
			for _, name := range []string{"product.0.rating", "product.1.rating"} {
				assert.Equal(t, 1, rows(name), "%s: one row of five", name)
			}
			assert.Equal(t, []string{"1 Very poor", "2 Poor", "3 Okay", "4 Good", "5 Excellent"}, browsertest.Eval[[]string](t, ctx,
				`Array.from(document.querySelectorAll('input[name="product.0.rating"]')).map(e => e.labels[0].textContent.trim())`),
				"each choice is named by its number and its word")
			assert.Equal(t, "Trail shoe Fjell, size 42", browsertest.Eval[string](t, ctx,
				`document.getElementById('product-0-rating').closest('fieldset').querySelector(':scope > legend').textContent.trim()`))
			assert.Empty(t, violations(t, ctx))

			press(t, ctx, kb.Tab, kb.Tab, kb.Tab)
			assert.Equal(t, "product-0-rating", focus(t, ctx).ID, "Tab reaches the first product's rating after the comment")
			press(t, ctx, " ", kb.ArrowRight, kb.ArrowRight)
			assert.Equal(t, "product-0-rating-3", focus(t, ctx).ID)
			assert.Equal(t, "3", browsertest.Eval[string](t, ctx, `document.querySelector('input[name="product.0.rating"]:checked').value`),
				"Space chooses, arrow keys change the choice")
			browsertest.Capture(t, ctx, fmt.Sprintf("feedback-product-chosen-%d", width))
			press(t, ctx, kb.Tab, kb.Tab)
			assert.Equal(t, "product-1-rating", focus(t, ctx).ID, "one Tab leaves the row for the product's comment, the next reaches the next product")
			assert.Empty(t, violations(t, ctx), "with a choice made")
		})
	}
}
