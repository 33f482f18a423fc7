package pages_test

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/pages"
	"github.com/touchpoint/touchpoint/templates"
)

func newPages(t *testing.T) *pages.Pages {
	t.Helper()
	p, err := pages.New()
	require.NoError(t, err)
	return p
}

var shop = brand.Brand{DisplayName: "Nordlicht Outdoor", LogoURL: "https://cdn.example/logo.svg", Color: "#14532D", ReplyTo: "hilfe@nordlicht.example"}

var products = []pages.Product{
	{Name: "Trail shoe Fjell", ImageURL: "https://cdn.example/shoe.png", Index: 0},
	{Name: "Merino socks", Index: 1},
}

func feedbackView(locale string) pages.FeedbackView {
	return pages.FeedbackView{Locale: locale, Brand: shop, Products: products, Action: "/feedback", EventID: "evt-3f1c2a9e", Sig: "c2lnbmF0dXJl"}
}

// everyPage renders each page of the package.
var everyPage = []struct {
	name   string
	status int
	render func(p *pages.Pages, w http.ResponseWriter, locale string) error
}{
	{"feedback", 200, func(p *pages.Pages, w http.ResponseWriter, l string) error {
		return p.Feedback(w, http.StatusOK, feedbackView(l))
	}},
	{"feedback-errors", 400, func(p *pages.Pages, w http.ResponseWriter, l string) error {
		v := feedbackView(l)
		v.Comment = "Schnelle Lieferung"
		v.Errors = []pages.FieldError{{Field: pages.FieldRating, Code: pages.CodeRatingRequired}, {Field: pages.FieldComment, Code: pages.CodeCommentTooLong}}
		return p.Feedback(w, http.StatusBadRequest, v)
	}},
	{"thanks", 200, func(p *pages.Pages, w http.ResponseWriter, l string) error {
		return p.Thanks(w, pages.ThanksView{Locale: l, Brand: shop, Rating: 4, EditURL: "/feedback?event=evt-3f1c2a9e&sig=c2lnbmF0dXJl"})
	}},
	{"notfound", 404, func(p *pages.Pages, w http.ResponseWriter, l string) error { return p.NotFound(w, l) }},
	{"expired", 410, func(p *pages.Pages, w http.ResponseWriter, l string) error {
		return p.Expired(w, pages.ExpiredView{Locale: l, Brand: shop})
	}},
	{"badrequest", 400, func(p *pages.Pages, w http.ResponseWriter, l string) error { return p.BadRequest(w, l) }},
	{"methodnotallowed", 405, func(p *pages.Pages, w http.ResponseWriter, l string) error {
		return p.MethodNotAllowed(w, l, []string{http.MethodGet, http.MethodPost})
	}},
	{"unsubscribe", 200, func(p *pages.Pages, w http.ResponseWriter, l string) error {
		return p.Unsubscribe(w, http.StatusOK, pages.UnsubscribeView{Locale: l, Brand: shop, Action: "/unsubscribe?event=evt-3f1c2a9e&sig=dW5zdWI", Address: "j•••@example.com"})
	}},
	{"unsubscribed", 200, func(p *pages.Pages, w http.ResponseWriter, l string) error {
		return p.Unsubscribed(w, pages.UnsubscribedView{Locale: l, Brand: shop})
	}},
}

func TestLocales(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"da", "de", "en", "es", "fr", "nl"}, newPages(t).Locales())
}

// Every page sends Strict-Transport-Security when the pages are served on
// https, and none when they are not (a browser would ignore it on http,
// and a development setup on http must not be pinned).
func TestHSTSOnlyOnHTTPS(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		p := newPages(t)
		p.HSTS = on
		for _, pg := range everyPage {
			rec := httptest.NewRecorder()
			require.NoError(t, pg.render(p, rec, "en"))
			if on {
				assert.Equal(t, "max-age=31536000", rec.Header().Get("Strict-Transport-Security"), pg.name)
			} else {
				assert.Empty(t, rec.Header().Values("Strict-Transport-Security"), pg.name)
			}
		}
	}
}

// TestEveryPageInEveryLocale checks what every page must have, whatever
// its content: status, headers, language, title, labels, no script, no
// placeholder left unfilled, and styles that the CSP allows.
func TestEveryPageInEveryLocale(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	for _, locale := range p.Locales() {
		for _, pg := range everyPage {
			t.Run(locale+"/"+pg.name, func(t *testing.T) {
				t.Parallel()
				rec := httptest.NewRecorder()
				require.NoError(t, pg.render(p, rec, locale))
				assert.Equal(t, pg.status, rec.Code)
				h := rec.Header()
				assert.Equal(t, "text/html; charset=utf-8", h.Get("Content-Type"))
				assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
				assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
				assert.Equal(t, "no-store", h.Get("Cache-Control"))

				d := parse(t, rec)
				assert.Equal(t, locale, attr(d.tag(atom.Html)[0], "lang"))
				title := d.tag(atom.Title)
				require.Len(t, title, 1)
				assert.NotEmpty(t, text(title[0]))
				h1 := d.tag(atom.H1)
				require.Len(t, h1, 1, "one heading")
				assert.NotEmpty(t, text(h1[0]))
				assert.Empty(t, d.tag(atom.Script), "no script")
				assert.NotContains(t, text(d.tag(atom.Body)[0])+text(title[0]), "{", "every placeholder filled")
				for _, n := range d.all(func(n *html.Node) bool { return true }) {
					for _, a := range n.Attr {
						assert.False(t, strings.HasPrefix(a.Key, "on"), "no event handler attributes: %s", a.Key)
						assert.NotEqual(t, "style", a.Key, "no style attributes: the CSP allows none")
					}
				}
				checkLabels(t, d)
				checkIDs(t, d)
				checkCSP(t, d, h.Get("Content-Security-Policy"))
			})
		}
	}
}

// checkLabels: every form control has a label, every radio sits in a
// fieldset with a legend, and aria references point at something.
func checkLabels(t *testing.T, d doc) {
	t.Helper()
	for _, n := range d.all(func(n *html.Node) bool { return n.DataAtom == atom.Input || n.DataAtom == atom.Textarea }) {
		if attr(n, "type") == "hidden" {
			continue
		}
		id := attr(n, "id")
		require.NotEmpty(t, id, "a visible input has an id")
		labels := d.all(func(l *html.Node) bool { return l.DataAtom == atom.Label && attr(l, "for") == id })
		if assert.Len(t, labels, 1, "input #%s has one label", id) {
			assert.NotEmpty(t, text(labels[0]), "label of #%s", id)
		}
		if attr(n, "type") == "radio" {
			fs := ancestor(n, atom.Fieldset)
			require.NotNil(t, fs, "radio #%s in a fieldset", id)
			legend := d.all(func(l *html.Node) bool { return l.DataAtom == atom.Legend && l.Parent == fs })
			require.Len(t, legend, 1)
			assert.NotEmpty(t, text(legend[0]))
		}
	}
	for _, n := range d.tag(atom.Button) {
		assert.NotEmpty(t, text(n), "a button says what it does")
	}
	for _, n := range d.tag(atom.Img) {
		assert.True(t, hasAttr(n, "alt"), "every image has alt")
	}
	for _, n := range d.all(func(n *html.Node) bool { return hasAttr(n, "aria-describedby") || hasAttr(n, "aria-labelledby") }) {
		for _, id := range strings.Fields(attr(n, "aria-describedby") + " " + attr(n, "aria-labelledby")) {
			assert.True(t, d.hasID(id), "aria reference #%s exists", id)
		}
	}
}

func checkIDs(t *testing.T, d doc) {
	t.Helper()
	seen := map[string]bool{}
	for _, n := range d.all(func(n *html.Node) bool { return attr(n, "id") != "" }) {
		assert.False(t, seen[attr(n, "id")], "id %q is unique", attr(n, "id"))
		seen[attr(n, "id")] = true
	}
}

// checkCSP: the policy allows exactly the page's inline styles by hash
// and is otherwise as strict as documented.
func checkCSP(t *testing.T, d doc, policy string) {
	t.Helper()
	var hashes []string
	for _, s := range d.tag(atom.Style) {
		sum := sha256.Sum256([]byte(rawText(s)))
		hashes = append(hashes, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
	require.Len(t, hashes, 2, "the page's CSS and the shop's colours")
	directives := map[string]string{}
	for _, dir := range strings.Split(policy, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(dir), " ")
		directives[name] = value
	}
	assert.Equal(t, map[string]string{
		"default-src":     "'none'",
		"style-src":       strings.Join(hashes, " "),
		"img-src":         "https:",
		"form-action":     "'self'",
		"frame-ancestors": "'none'",
		"base-uri":        "'none'",
	}, directives)
}

func TestFeedbackForm(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	rec := httptest.NewRecorder()
	v := feedbackView("en_GB")
	v.Rating = 4
	v.Comment = "Comfortable from day one."
	require.NoError(t, p.Feedback(rec, http.StatusOK, v))
	d := parse(t, rec)

	assert.Equal(t, "en", attr(d.tag(atom.Html)[0], "lang"))
	assert.Equal(t, "How was your order at Nordlicht Outdoor?", text(d.tag(atom.Title)[0]))
	assert.Equal(t, "How was your order at Nordlicht Outdoor?", text(d.tag(atom.H1)[0]))
	assert.Equal(t, "Nordlicht Outdoor", attr(d.one("logo", func(n *html.Node) bool { return hasClass(n, "shop-logo") }), "alt"))

	form := d.one("form", func(n *html.Node) bool { return n.DataAtom == atom.Form })
	assert.Equal(t, "post", attr(form, "method"))
	assert.Equal(t, "/feedback", attr(form, "action"))

	hidden := map[string]string{}
	for _, n := range d.all(func(n *html.Node) bool { return n.DataAtom == atom.Input && attr(n, "type") == "hidden" }) {
		hidden[attr(n, "name")] = attr(n, "value")
		assert.Equal(t, form, ancestor(n, atom.Form))
	}
	assert.Equal(t, map[string]string{"event": "evt-3f1c2a9e", "sig": "c2lnbmF0dXJl"}, hidden)

	radios := d.all(func(n *html.Node) bool { return n.DataAtom == atom.Input && attr(n, "name") == "rating" })
	require.Len(t, radios, 5)
	for i := range 2 {
		name := fmt.Sprintf("product.%d.rating", i)
		productRadios := d.all(func(n *html.Node) bool { return n.DataAtom == atom.Input && attr(n, "name") == name })
		require.Len(t, productRadios, 5, "each product has its own rating")
		assert.Equal(t, fmt.Sprintf("product-%d-rating", i), attr(productRadios[0], "id"))
		legend := ancestor(productRadios[0], atom.Fieldset).FirstChild
		for legend != nil && legend.DataAtom != atom.Legend {
			legend = legend.NextSibling
		}
		require.NotNil(t, legend, "the product's group has a legend")
		assert.Equal(t, products[i].Name, text(legend), "the product is named in its legend")
		ta := d.byID(fmt.Sprintf("product-%d-comment", i))
		assert.Equal(t, fmt.Sprintf("product.%d.comment", i), attr(ta, "name"))
		assert.Equal(t, "2000", attr(ta, "maxlength"))
	}
	consent := d.byID("showName")
	assert.Equal(t, "checkbox", attr(consent, "type"))
	assert.Equal(t, "showName", attr(consent, "name"))
	assert.Equal(t, "1", attr(consent, "value"))
	assert.False(t, hasAttr(consent, "checked"), "off by default")
	assert.Equal(t, "Show my first name and the initial of my last name",
		text(d.one("label", func(n *html.Node) bool { return n.DataAtom == atom.Label && attr(n, "for") == "showName" })))
	fieldset := ancestor(radios[0], atom.Fieldset)
	require.NotNil(t, fieldset)
	assert.Equal(t, "Overall, how would you rate it?", text(d.all(func(n *html.Node) bool { return n.DataAtom == atom.Legend })[0]))
	words := []string{"1 Very poor", "2 Poor", "3 Okay", "4 Good", "5 Excellent"}
	for i, r := range radios {
		assert.Equal(t, "rating", attr(r, "name"))
		assert.Equal(t, string(rune('1'+i)), attr(r, "value"))
		assert.Equal(t, fieldset, ancestor(r, atom.Fieldset), "all radios in one fieldset")
		label := d.one("label", func(n *html.Node) bool { return n.DataAtom == atom.Label && attr(n, "for") == attr(r, "id") })
		assert.Equal(t, words[i], text(label), "the label names the number and its meaning")
		assert.Equal(t, i == 3, hasAttr(r, "checked"), "the given rating is kept")
	}
	assert.Equal(t, "rating", attr(radios[0], "id"), "the first radio carries the field's id")

	ta := d.one("textarea", func(n *html.Node) bool { return n.DataAtom == atom.Textarea && attr(n, "name") == "comment" })
	assert.Equal(t, "comment", attr(ta, "name"))
	assert.Equal(t, "2000", attr(ta, "maxlength"))
	assert.Equal(t, "Comfortable from day one.", rawText(ta))
	assert.Equal(t, "Tell us more", text(d.one("label", func(n *html.Node) bool { return n.DataAtom == atom.Label && attr(n, "for") == "comment" })))
	hint := d.byID(attr(ta, "aria-describedby"))
	assert.True(t, strings.HasPrefix(text(hint), "Optional."), text(hint))

	buttons := d.all(func(n *html.Node) bool { return n.DataAtom == atom.Button || attr(n, "type") == "submit" })
	require.Len(t, buttons, 1, "one submit button")
	assert.Equal(t, "submit", attr(buttons[0], "type"))
	assert.Equal(t, "Send feedback", text(buttons[0]))

	items := d.all(func(n *html.Node) bool { return hasClass(n, "product") })
	require.Len(t, items, 2)
	assert.Equal(t, "Trail shoe Fjell", text(items[0]))
	imgs := d.all(func(n *html.Node) bool { return n.DataAtom == atom.Img && hasClass(n, "product-image") })
	require.Len(t, imgs, 1, "only the product with an image shows one")
	assert.Equal(t, "https://cdn.example/shoe.png", attr(imgs[0], "src"))
	assert.Empty(t, attr(imgs[0], "alt"), "the name stands beside the picture")

	assert.Empty(t, d.all(func(n *html.Node) bool { return hasClass(n, "error-summary") }), "no errors, no summary")
	assert.Empty(t, d.all(func(n *html.Node) bool { return hasClass(n, "error-message") }))
}

// TestFeedbackErrors follows the GOV.UK error pattern: the title says
// there is an error, a summary at the top links to each field, the field
// carries its own message, and the reader's answers are kept.
func TestFeedbackErrors(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	for _, tc := range []struct {
		locale, title, summary, ratingMsg, commentMsg string
	}{
		{"en", "Error: How was your order at Nordlicht Outdoor?", "There is a problem",
			"Choose a rating from 1 (very poor) to 5 (excellent)", "Your comment must be 2,000 characters or fewer"},
		{"de_DE", "Fehler: Wie war Ihre Bestellung bei Nordlicht Outdoor?", "Bitte prüfen Sie Ihre Angaben",
			"Bitte wählen Sie eine Bewertung von 1 (sehr schlecht) bis 5 (ausgezeichnet)", "Ihr Kommentar darf höchstens 2.000 Zeichen lang sein"},
	} {
		t.Run(tc.locale, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			v := feedbackView(tc.locale)
			v.Comment = "Line one\nLine two <b>"
			v.Errors = []pages.FieldError{{Field: pages.FieldRating, Code: pages.CodeRatingRequired}, {Field: pages.FieldComment, Code: pages.CodeCommentTooLong}}
			require.NoError(t, p.Feedback(rec, http.StatusBadRequest, v))
			assert.Equal(t, http.StatusBadRequest, rec.Code)
			d := parse(t, rec)
			assert.Equal(t, tc.title, text(d.tag(atom.Title)[0]))

			summary := d.one("summary", func(n *html.Node) bool { return hasClass(n, "error-summary") })
			assert.Equal(t, "alert", attr(summary, "role"))
			assert.True(t, hasAttr(summary, "autofocus"), "focus lands on the summary")
			assert.Equal(t, "-1", attr(summary, "tabindex"))
			main := d.tag(atom.Main)[0]
			first := d.all(func(n *html.Node) bool { return within(n, main) })[0]
			assert.Equal(t, summary, first, "the summary comes first")
			assert.Equal(t, tc.summary, text(d.byID(attr(summary, "aria-labelledby"))))
			links := d.all(func(n *html.Node) bool { return n.DataAtom == atom.A && within(n, summary) })
			require.Len(t, links, 2)
			assert.Equal(t, "#rating", attr(links[0], "href"))
			assert.Equal(t, tc.ratingMsg, text(links[0]))
			assert.Equal(t, "#comment", attr(links[1], "href"))
			assert.Equal(t, tc.commentMsg, text(links[1]))
			for _, l := range links {
				target := d.byID(strings.TrimPrefix(attr(l, "href"), "#"))
				assert.Contains(t, []atom.Atom{atom.Input, atom.Textarea}, target.DataAtom, "the link reaches a field")
			}

			ratingErr := d.byID("rating-error")
			assert.Equal(t, tc.ratingMsg, strings.TrimPrefix(strings.TrimPrefix(text(ratingErr), "Error: "), "Fehler: "))
			assert.Equal(t, ancestor(d.byID("rating"), atom.Fieldset), ancestor(ratingErr, atom.Fieldset), "the message is inside the fieldset")
			assert.Contains(t, strings.Fields(attr(ancestor(ratingErr, atom.Fieldset), "aria-describedby")), "rating-error")
			assert.Contains(t, strings.Fields(attr(d.byID("comment"), "aria-describedby")), "comment-error")
			assert.Equal(t, "Line one\nLine two <b>", rawText(d.byID("comment")), "the comment is kept as typed")
		})
	}
}

// TestHostileInputIsEscaped feeds script, quotes, a closing textarea tag
// and direction overrides through every field a page shows.
func TestHostileInputIsEscaped(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	const (
		evil    = `"><script>alert(1)</script><img src=x onerror=alert(2)>`
		rlo     = "Shop \u202egnp.exe"
		comment = "</textarea><script>alert(3)</script>\n'single' \"double\" &amp; \u202eevil\u202c"
	)
	hostile := brand.Brand{DisplayName: rlo + evil, LogoURL: "javascript:alert(4)", Color: `red;}</style><script>alert(5)</script>`, ReplyTo: `x@y.example"><script>`}
	v := pages.FeedbackView{
		Locale: "en", Brand: hostile, Action: "/feedback",
		Products: []pages.Product{{Name: evil, ImageURL: "javascript:alert(6)", Comment: comment},
			{Name: rlo, ImageURL: "http://insecure.example/i.png", Index: 1}},
		EventID: `evt-1" autofocus onfocus="alert(7)`, Sig: "sig'><script>", Comment: comment,
	}
	renders := map[string]func(w http.ResponseWriter) error{
		"feedback": func(w http.ResponseWriter) error { return p.Feedback(w, 200, v) },
		"thanks": func(w http.ResponseWriter) error {
			return p.Thanks(w, pages.ThanksView{Locale: "en", Brand: hostile, Rating: 5, EditURL: "javascript:alert(8)"})
		},
		"unsubscribe": func(w http.ResponseWriter) error {
			return p.Unsubscribe(w, 200, pages.UnsubscribeView{Locale: "en", Brand: hostile, Action: "javascript:alert(9)", Address: evil})
		},
		"unsubscribed": func(w http.ResponseWriter) error {
			return p.Unsubscribed(w, pages.UnsubscribedView{Locale: "en", Brand: hostile})
		},
	}
	for name, render := range renders {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			require.NoError(t, render(rec))
			d := parse(t, rec)
			assert.Empty(t, d.tag(atom.Script))
			assert.NotContains(t, rec.Body.String(), "<script>")
			for _, n := range d.all(func(*html.Node) bool { return true }) {
				for _, a := range n.Attr {
					assert.False(t, strings.HasPrefix(a.Key, "on"), "attribute %s injected", a.Key)
					assert.NotContains(t, strings.ToLower(a.Val), "javascript:", "%s=%q", a.Key, a.Val)
				}
			}
			for _, img := range d.tag(atom.Img) {
				assert.True(t, strings.HasPrefix(attr(img, "src"), "https://"), "only https images: %s", attr(img, "src"))
			}
			assert.NotContains(t, rawText(d.tag(atom.Style)[1]), "red", "an invalid colour never reaches the CSS")
			// The shop's name is shown as typed, and isolated: its
			// override cannot turn the sentence around it.
			for _, b := range d.tag(atom.Bdi) {
				assert.Contains(t, []string{rlo + evil, rlo, evil}, rawText(b))
			}
			h1 := d.tag(atom.H1)[0]
			if strings.Contains(rawText(h1), "Shop") {
				bdis := d.all(func(n *html.Node) bool { return n.DataAtom == atom.Bdi && ancestor(n, atom.H1) == h1 })
				require.Len(t, bdis, 1)
				assert.Equal(t, rlo+evil, rawText(bdis[0]))
			}
		})
	}

	rec := httptest.NewRecorder()
	require.NoError(t, p.Feedback(rec, 200, v))
	d := parse(t, rec)
	assert.Equal(t, comment, rawText(d.byID("comment")), "the comment comes back exactly, inside its textarea")
	assert.Len(t, d.tag(atom.Textarea), 3, "the shop's and one per product")
	assert.Equal(t, comment, rawText(d.byID("product-0-comment")), "a product's comment comes back as text")
	hidden := d.all(func(n *html.Node) bool { return attr(n, "type") == "hidden" })
	require.Len(t, hidden, 2)
	assert.Equal(t, v.EventID, attr(hidden[0], "value"))
	assert.Equal(t, v.Sig, attr(hidden[1], "value"))
	assert.Empty(t, d.all(func(n *html.Node) bool { return hasClass(n, "shop-logo") }), "no javascript: logo")
	assert.Equal(t, rlo+evil, rawText(d.one("shop name", func(n *html.Node) bool { return n.DataAtom == atom.Bdi && hasClass(n.Parent, "shop-name") })))
}

// TestPickLikeTheInvites: the pages choose a locale exactly as the
// invite emails do, so a customer reads the page in the email's language.
func TestPickLikeTheInvites(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	tpl, err := templates.New()
	require.NoError(t, err)
	for in, want := range map[string]string{
		"de_AT": "de", "de-at": "de", "de_CH": "de", "DE": "de", "fr_CA": "fr", "nl_BE": "nl",
		"da_DK": "da", "es_MX": "es", "en_US": "en", "pt_BR": "en", "": "en", "x": "en", " fr ": "fr",
	} {
		assert.Equal(t, want, p.Pick(in), "%q", in)
		// Where the invites have a regional variant the pages do not,
		// both end at the same language.
		mail := tpl.Pick(in)
		lang, _, _ := strings.Cut(mail, "_")
		assert.Equal(t, lang, p.Pick(in), "%q: the invite was %s", in, mail)
	}
	for _, l := range tpl.Locales() {
		if !strings.Contains(l, "_") {
			assert.Contains(t, p.Locales(), l, "every invite language has its pages")
		}
	}
}

func TestAcceptLanguage(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	for in, want := range map[string]string{
		"":                                 "en",
		"de-AT,de;q=0.9,en;q=0.8":          "de",
		"pt-BR,pt;q=0.9,nl;q=0.8,en;q=0.7": "nl",
		"en;q=0.5, fr;q=0.9":               "fr",
		"*":                                "en",
		"ja, da;q=0":                       "en",
		"es-419":                           "es",
		"fr;q=bogus, da":                   "da",
		"DA-dk":                            "da",
	} {
		assert.Equal(t, want, p.AcceptLanguage(in), "%q", in)
	}
}

// TestBrandColours: the shop's colour reaches the page only where text
// stays readable on it.
func TestBrandColours(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	for _, tc := range []struct {
		color string
		want  []string
	}{
		{"#14532D", []string{"--accent:#14532D", "--button:#14532D", "--button-text:#FFFFFF", "--strong:#14532D"}},
		{"#FFD700", []string{"--accent:#FFD700", "--button:#FFD700", "--button-text:#111827", "--button-border:#111827", "--strong:#2563EB"}},
		{"#808080", []string{"--accent:#808080", "--button:#2563EB", "--button-text:#FFFFFF", "--strong:#2563EB"}},
		{"", []string{"--accent:#2563EB", "--button:#2563EB", "--strong:#2563EB"}},
	} {
		rec := httptest.NewRecorder()
		require.NoError(t, p.Feedback(rec, 200, pages.FeedbackView{Locale: "en", Brand: brand.Brand{DisplayName: "S", Color: tc.color}, Action: "/feedback"}))
		css := rawText(parse(t, rec).tag(atom.Style)[1])
		for _, w := range tc.want {
			assert.Contains(t, css, w+";", tc.color)
		}
	}
}

// TestWithoutShopName: a page for an account without a display name
// still reads naturally.
func TestWithoutShopName(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	rec := httptest.NewRecorder()
	require.NoError(t, p.Feedback(rec, 200, pages.FeedbackView{Locale: "de", Action: "/feedback"}))
	d := parse(t, rec)
	assert.Equal(t, "Wie war Ihre Bestellung?", text(d.tag(atom.H1)[0]))
	assert.Empty(t, d.tag(atom.Header), "no shop header")
	assert.Empty(t, d.tag(atom.Bdi))
}

// TestNotFoundRevealsNothing: the 404 page is the same whatever the link
// was; it takes nothing but a locale.
func TestNotFoundRevealsNothing(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	rec := httptest.NewRecorder()
	require.NoError(t, p.NotFound(rec, p.AcceptLanguage("fr-FR,fr;q=0.9")))
	assert.Equal(t, http.StatusNotFound, rec.Code)
	d := parse(t, rec)
	assert.Equal(t, "fr", attr(d.tag(atom.Html)[0], "lang"))
	assert.Equal(t, "Page introuvable", text(d.tag(atom.H1)[0]))
	assert.Empty(t, d.tag(atom.Form))
	assert.Empty(t, d.tag(atom.Img))
	assert.Empty(t, d.tag(atom.Header))
	assert.Empty(t, d.tag(atom.A))
}

func TestUnsubscribePage(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	rec := httptest.NewRecorder()
	require.NoError(t, p.Unsubscribe(rec, 200, pages.UnsubscribeView{Locale: "nl_NL", Brand: shop, Action: "/unsubscribe?event=evt-1&sig=abc", Address: "j•••@example.com"}))
	d := parse(t, rec)
	assert.Equal(t, "nl", attr(d.tag(atom.Html)[0], "lang"))
	assert.Equal(t, "Afmelden voor feedbackverzoeken van Nordlicht Outdoor?", text(d.tag(atom.H1)[0]))
	form := d.one("form", func(n *html.Node) bool { return n.DataAtom == atom.Form })
	assert.Equal(t, "post", attr(form, "method"))
	assert.Equal(t, "/unsubscribe?event=evt-1&sig=abc", attr(form, "action"))
	buttons := d.tag(atom.Button)
	require.Len(t, buttons, 1, "one button")
	assert.Equal(t, "Afmelden", text(buttons[0]))
	body := d.all(func(n *html.Node) bool { return n.DataAtom == atom.Input && within(n, form) })
	require.Len(t, body, 1)
	assert.Equal(t, []string{"hidden", "List-Unsubscribe", "One-Click"}, []string{attr(body[0], "type"), attr(body[0], "name"), attr(body[0], "value")},
		"the form posts what a one-click unsubscribe posts")
	assert.Contains(t, text(d.tag(atom.Main)[0]), "Dit geldt voor j•••@example.com.")

	rec = httptest.NewRecorder()
	require.NoError(t, p.Unsubscribed(rec, pages.UnsubscribedView{Locale: "es", Brand: shop}))
	d = parse(t, rec)
	assert.Equal(t, "Te has dado de baja", text(d.tag(atom.H1)[0]))
	mail := d.one("mailto", func(n *html.Node) bool { return n.DataAtom == atom.A })
	assert.Equal(t, "mailto:hilfe@nordlicht.example", attr(mail, "href"))
}

func TestThanksPage(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	rec := httptest.NewRecorder()
	require.NoError(t, p.Thanks(rec, pages.ThanksView{Locale: "da", Brand: shop, Rating: 5, EditURL: "/feedback?event=evt-1&sig=abc"}))
	d := parse(t, rec)
	main := text(d.tag(atom.Main)[0])
	assert.Equal(t, "Tak for din feedback", text(d.tag(atom.H1)[0]))
	assert.Contains(t, main, "Nordlicht Outdoor har modtaget din bedømmelse.")
	assert.Contains(t, main, "Din bedømmelse: 5 ud af 5 – Fremragende")
	assert.Equal(t, "/feedback?event=evt-1&sig=abc", attr(d.one("edit link", func(n *html.Node) bool { return n.DataAtom == atom.A }), "href"))

	rec = httptest.NewRecorder()
	require.NoError(t, p.Thanks(rec, pages.ThanksView{Locale: "da", Brand: shop}))
	d = parse(t, rec)
	assert.NotContains(t, text(d.root), "ud af 5", "no rating, no line about it")
	assert.Empty(t, d.tag(atom.A))
}

// TestRenderFailure: a page that cannot be rendered (here: an error code
// no locale knows) answers a bare 500, never half a page, and tells the
// caller.
func TestRenderFailure(t *testing.T) {
	t.Parallel()
	p := newPages(t)
	rec := httptest.NewRecorder()
	err := p.Feedback(rec, http.StatusBadRequest, pages.FeedbackView{Locale: "en", Action: "/feedback",
		Errors: []pages.FieldError{{Field: pages.FieldRating, Code: "no_such_code"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no_such_code")
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'none'")
	d := parse(t, rec)
	assert.Empty(t, d.tag(atom.Form))
	assert.NotContains(t, rec.Body.String(), "no_such_code")
}
