package mail_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/internal/browsertest"
	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/templates"
)

// sentMail is one rendered message as it left through SMTP and arrived
// at a real listener: what a mail client is given to show.
type sentMail struct {
	name string // for screenshots: kind, template, locale
	html string // the HTML part, decoded
}

// mailShot is one message of the browser tests: a kind, a locale and the
// shop's own template or the built-in one (nil).
type mailShot struct {
	kind    templates.Kind
	locale  string
	content *templates.Content
}

// shopTemplates are a shop's own invite texts, in the two locales the
// tests photograph, written with every placeholder.
var shopTemplates = map[string]*templates.Content{
	"en": {Subject: "{{firstName}}, how is your {{productName}}?", Heading: "Thanks for shopping at {{shopName}}",
		Body:        "Hi {{firstName}},\n\nyour order {{orderReference}} arrived a few days ago. Two minutes of your time help the next customer choose.",
		ButtonLabel: "Rate {{productName}}"},
	"de": {Subject: "{{firstName}}, wie gefällt Ihnen {{productName}}?", Heading: "Danke für Ihren Einkauf bei {{shopName}}",
		Body:        "Hallo {{firstName}},\n\nIhre Bestellung {{orderReference}} ist vor ein paar Tagen angekommen. Zwei Minuten Ihrer Zeit helfen dem nächsten Kunden bei der Wahl.",
		ButtonLabel: "{{productName}} bewerten"},
}

// sendForBrowser renders each shot as the worker does, sends it over SMTP
// to a real listener and returns the HTML parts as they arrived. Images
// (logo, product) are served over https by imgs.
func sendForBrowser(t *testing.T, shots []mailShot, imgs *httptest.Server) []sentMail {
	t.Helper()
	lib, err := templates.Load()
	require.NoError(t, err)
	srv := smtptest.Start(t, smtptest.Options{})
	sender, err := mail.NewSMTP(srv.URL(), from, mail.SMTPOptions{})
	require.NoError(t, err)

	shop := brand.Brand{DisplayName: "Nordlicht Outdoor", LogoURL: imgs.URL + "/logo.png", Color: "#1d6b4f"}
	var names []string
	for i, s := range shots {
		in := templates.Sample(templates.Language(s.locale), "checkout")
		in.Brand = shop
		in.Products = []templates.Product{{Name: in.Products[0].Name, ImageURL: imgs.URL + "/product.png"}}
		in.FeedbackURL = "https://reviews.shop.example/feedback?event=" + templates.SampleEventID + "&sig=x"
		in.UnsubscribeURL = "https://reviews.shop.example/unsubscribe?event=" + templates.SampleEventID + "&sig=y"
		r, err := lib.Render(s.kind, s.locale, s.content, in)
		require.NoError(t, err)
		require.NoError(t, sender.Send(t.Context(), mail.Message{
			EventID: fmt.Sprintf("evt-%08d-0000-4000-8000-000000000000", i), Reminder: s.kind.Reminder(),
			To: "emma@example.com", Locale: s.locale, Subject: r.Subject, Text: r.Text, HTML: r.HTML,
			UnsubscribeURL: in.UnsubscribeURL, FromName: shop.DisplayName}))
		source := "builtin"
		if s.content != nil {
			source = "custom"
		}
		names = append(names, fmt.Sprintf("%s-%s-%s", s.kind, source, s.locale))
	}
	msgs := srv.Messages()
	require.Len(t, msgs, len(shots))
	out := make([]sentMail, len(msgs))
	for i, m := range msgs {
		out[i] = sentMail{name: names[i], html: htmlPart(t, m)}
	}
	return out
}

// htmlPart is the decoded text/html part of a message from the listener.
func htmlPart(t *testing.T, raw smtptest.Message) string {
	t.Helper()
	m, err := raw.Parse()
	require.NoError(t, err)
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	require.NoError(t, err)
	r := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := r.NextPart() // decodes quoted-printable
		require.NoError(t, err, "no text/html part")
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			b, err := io.ReadAll(p)
			require.NoError(t, err)
			return string(b)
		}
	}
}

// servePictures serves a logo and a product picture over https, as a
// shop's CDN would: small PNGs, one of them wider than a phone.
func servePictures(t *testing.T) *httptest.Server {
	t.Helper()
	logo, product := solidPNG(t, 240, 60, color.RGBA{0x1d, 0x6b, 0x4f, 0xff}), solidPNG(t, 900, 600, color.RGBA{0xc8, 0x8a, 0x3a, 0xff})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		if r.URL.Path == "/logo.png" {
			w.Write(logo)
			return
		}
		w.Write(product)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// solidPNG is a picture of one colour.
func solidPNG(t *testing.T, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(c), image.Point{}, draw.Src)
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

// serveMails serves each HTML part at /<name>, as a webmail shows it.
func serveMails(t *testing.T, mails []sentMail) *httptest.Server {
	t.Helper()
	byName := map[string]string{}
	for _, m := range mails {
		byName["/"+m.name] = m.html
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		html, ok := byName[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, html)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// browserShots are the messages photographed: invite and reminder, the
// built-in texts and a shop's own invite, in English and German.
func browserShots() []mailShot {
	var shots []mailShot
	for _, locale := range []string{"en", "de"} {
		shots = append(shots,
			mailShot{kind: templates.KindInvite, locale: locale},
			mailShot{kind: templates.KindReminder, locale: locale},
			mailShot{kind: templates.KindInvite, locale: locale, content: shopTemplates[locale]})
	}
	return shots
}

// TestBrowserMailsFitAPhone renders each sent message's HTML part in a
// real browser at a phone's width and a desktop's: nothing runs off the
// right edge (no horizontal scrolling, the button, pictures, footer and
// unsubscribe link inside the viewport), and on a desktop the content
// keeps its reading width.
func TestBrowserMailsFitAPhone(t *testing.T) {
	b := browsertest.Start(t)
	shots := browserShots()
	mails := sendForBrowser(t, shots, servePictures(t))
	site := serveMails(t, mails)

	for _, m := range mails {
		t.Run(m.name, func(t *testing.T) {
			for _, width := range []int64{360, 1280} {
				tab := b.Tab(t)
				require.NoError(t, chromedp.Do(tab, chromedp.EmulateViewport(width, 800), chromedp.Navigate(site.URL+"/"+m.name)))
				// Wait for the pictures: their size decides the layout.
				require.NoError(t, chromedp.Do(tab, chromedp.Poll[chromedp.Void](`Array.from(document.images).every(i => i.complete)`)))

				scroll := browsertest.Eval[float64](t, tab, `document.documentElement.scrollWidth`)
				assert.LessOrEqual(t, scroll, float64(width), "%d px: the message scrolls sideways", width)
				for _, sel := range []string{"a[href*='/feedback']", "img", "a[href*='/unsubscribe']"} {
					right := browsertest.Eval[float64](t, tab, fmt.Sprintf(
						`Math.max(...Array.from(document.querySelectorAll(%q)).map(e => e.getBoundingClientRect().right))`, sel))
					assert.LessOrEqual(t, right, float64(width), "%d px: %s runs off the right edge", width, sel)
				}
				content := browsertest.Eval[float64](t, tab, `document.querySelector("a[href*='/feedback']").closest('table').getBoundingClientRect().width`)
				if width == 1280 {
					assert.LessOrEqual(t, content, 560.0, "the content keeps its reading width on a desktop")
				}
				assert.NotEmpty(t, browsertest.Eval[string](t, tab, `document.body.innerText`))
				browsertest.Capture(t, tab, fmt.Sprintf("%s-%d", m.name, width))
			}
		})
	}
}

// TestBrowserMailDocsScreenshots refreshes the pictures of the messages in
// docs/customer-experience.md when TOUCHPOINT_UPDATE_DOCS is set.
func TestBrowserMailDocsScreenshots(t *testing.T) {
	if os.Getenv("TOUCHPOINT_UPDATE_DOCS") == "" {
		t.Skip("set TOUCHPOINT_UPDATE_DOCS=1 to refresh docs/mail-*.png")
	}
	b := browsertest.Start(t)
	mails := sendForBrowser(t, browserShots(), servePictures(t))
	site := serveMails(t, mails)
	// The pictures the document shows: the built-in invite beside a shop's
	// own at both widths in English, both on a phone in German, and the
	// reminder on a phone in both languages.
	docs := map[string][]int{
		"invite-builtin-en": {360, 1280}, "invite-custom-en": {360, 1280},
		"invite-builtin-de": {360}, "invite-custom-de": {360},
		"reminder-builtin-en": {360}, "reminder-builtin-de": {360},
	}
	for _, m := range mails {
		for _, width := range docs[m.name] {
			b.ScreenshotTo(t, site.URL+"/"+m.name, width, 1, filepath.Join("..", "docs", fmt.Sprintf("mail-%s-%d.png", m.name, width)))
		}
	}
}
