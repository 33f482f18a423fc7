package templates_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	texttemplate "text/template"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/templates"
)

var inviteShop = brand.Brand{DisplayName: "Nordlicht Outdoor", LogoURL: "https://cdn.example/logo.png", Color: "#14532D"}

// The subjects with the shop's name, invite and reminder, as a customer
// reads them in each language.
var inviteShopSubjects = map[string][2]string{
	"en": {"How was your order at Nordlicht Outdoor?", "A quick reminder: how was your order at Nordlicht Outdoor?"},
	"de": {"Wie war Ihre Bestellung bei Nordlicht Outdoor?", "Kurze Erinnerung: Wie war Ihre Bestellung bei Nordlicht Outdoor?"},
	"da": {"Hvordan var dit køb hos Nordlicht Outdoor?", "En lille påmindelse: Hvordan var dit køb hos Nordlicht Outdoor?"},
	"fr": {"Comment s’est passée votre commande chez Nordlicht Outdoor\u00a0?", "Petit rappel\u00a0: comment s’est passée votre commande chez Nordlicht Outdoor\u00a0?"},
	"es": {"¿Qué tal fue tu pedido en Nordlicht Outdoor?", "Un breve recordatorio: ¿qué tal fue tu pedido en Nordlicht Outdoor?"},
	"nl": {"Hoe was uw bestelling bij Nordlicht Outdoor?", "Even een herinnering: hoe was uw bestelling bij Nordlicht Outdoor?"},
}

func inviteHTML(t *testing.T, s string) *html.Node {
	t.Helper()
	n, err := html.Parse(strings.NewReader(s))
	require.NoError(t, err)
	return n
}

func inviteElements(root *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
	}
	return out
}

func inviteAttr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func inviteText(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	// Collapse ASCII white space only: a no-break space is content.
	return strings.Join(strings.FieldsFunc(b.String(), func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '\r' }), " ")
}

func TestRenderNamesTheShop(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	for _, locale := range s.Locales() {
		lang, _, _ := strings.Cut(locale, "_")
		for i, reminder := range []bool{false, true} {
			m, err := s.Render(locale, templates.Data{FirstName: "Jana", Brand: inviteShop, Reminder: reminder, FeedbackURL: "https://t.example/f?e=1&s=2"})
			require.NoError(t, err, locale)
			assert.Equal(t, inviteShopSubjects[lang][i], m.Subject, "%s reminder=%v", locale, reminder)
			// The opening lines name the shop too, in both parts.
			textIntro := strings.SplitN(m.Text, "\n\n", 3)[1]
			assert.Contains(t, textIntro, "Nordlicht Outdoor", "%s: the text greets from the shop", locale)
			doc := inviteHTML(t, m.HTML)
			assert.Equal(t, inviteShopSubjects[lang][i], inviteText(inviteElements(doc, func(n *html.Node) bool { return n.DataAtom == atom.Title })[0]))
			paras := inviteElements(doc, func(n *html.Node) bool { return n.DataAtom == atom.P })
			assert.Contains(t, inviteText(paras[0]), "Nordlicht Outdoor", "%s: the HTML greets from the shop", locale)
			logo := inviteElements(doc, func(n *html.Node) bool { return n.DataAtom == atom.Img && inviteAttr(n, "src") == inviteShop.LogoURL })
			require.Len(t, logo, 1, locale)
			assert.Equal(t, "Nordlicht Outdoor", inviteAttr(logo[0], "alt"))
			assert.Contains(t, m.Text, "https://t.example/f?e=1&s=2", "the same feedback link")
		}
	}
}

func TestRenderWithoutShopReadsAsBefore(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	m, err := s.Render("de", templates.Data{FirstName: "Jana", FeedbackURL: "https://t.example/f"})
	require.NoError(t, err)
	assert.Equal(t, "Wie war Ihre Erfahrung?", m.Subject)
	assert.Equal(t, "Hallo Jana,\n\nvielen Dank für Ihren Einkauf. Wir würden gern erfahren, wie zufrieden Sie waren – es dauert nur eine Minute.\n\nVielen Dank, dass Sie uns helfen, besser zu werden.\n\nFeedback geben:\n\n  https://t.example/f\n", m.Text)
	m, err = s.Render("fr", templates.Data{FeedbackURL: "https://t.example/f"})
	require.NoError(t, err)
	assert.Equal(t, "Comment s’est passée votre expérience\u00a0?", m.Subject, "the no-break space survives the header clean-up")
	m, err = s.Render("en", templates.Data{Reminder: true, FeedbackURL: "https://t.example/f"})
	require.NoError(t, err)
	assert.Equal(t, "A quick reminder: how was your experience?", m.Subject)
	assert.True(t, strings.HasPrefix(m.Text, "Hello,\n\na few days ago we asked how your recent purchase went."), m.Text)
}

func TestRenderReminderDiffersFromInvite(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	for _, locale := range s.Locales() {
		for _, b := range []brand.Brand{{}, inviteShop} {
			d := templates.Data{FirstName: "Jana", Brand: b, FeedbackURL: "https://t.example/f"}
			invite, err := s.Render(locale, d)
			require.NoError(t, err)
			d.Reminder = true
			reminder, err := s.Render(locale, d)
			require.NoError(t, err)
			assert.NotEqual(t, invite.Subject, reminder.Subject, locale)
			assert.NotEqual(t, strings.SplitN(invite.Text, "\n\n", 3)[1], strings.SplitN(reminder.Text, "\n\n", 3)[1], "%s: its own wording", locale)
			assert.Contains(t, reminder.HTML, `href="https://t.example/f"`, locale)
		}
	}
}

func TestRenderUnsubscribeLink(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	const unsub = "https://t.example/unsubscribe?event=evt-1&sig=u"
	words := map[string]string{"en": "Unsubscribe", "de": "Abmelden", "da": "Afmeld", "fr": "Se désabonner", "es": "Darme de baja", "nl": "Afmelden"}
	for _, locale := range s.Locales() {
		lang, _, _ := strings.Cut(locale, "_")
		m, err := s.Render(locale, templates.Data{Brand: inviteShop, UnsubscribeURL: unsub, FeedbackURL: "https://t.example/f"})
		require.NoError(t, err)
		assert.True(t, strings.HasSuffix(m.Text, " "+words[lang]+":\n  "+unsub+"\n"), "%s: the text ends with the link:\n%s", locale, m.Text)
		assert.Contains(t, m.Text, "\n-- \n", "%s: a signature separator before the footer", locale)
		links := inviteElements(inviteHTML(t, m.HTML), func(n *html.Node) bool { return n.DataAtom == atom.A && inviteAttr(n, "href") == unsub })
		require.Len(t, links, 1, locale)
		assert.Equal(t, words[lang], inviteText(links[0]))

		m, err = s.Render(locale, templates.Data{Brand: inviteShop, FeedbackURL: "https://t.example/f"})
		require.NoError(t, err)
		assert.NotContains(t, m.Text, "unsubscribe")
		assert.NotContains(t, m.Text, words[lang]+":")
		assert.Len(t, inviteElements(inviteHTML(t, m.HTML), func(n *html.Node) bool { return n.DataAtom == atom.A }), 1, "%s: only the feedback link", locale)
	}
}

// TestRenderBrandColour: the button takes the shop's colour only where
// its text stays readable.
func TestRenderBrandColour(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	for color, want := range map[string]string{
		"#14532D":  "background:#14532D;color:#FFFFFF;border:2px solid #14532D",
		"#FFD700":  "background:#FFD700;color:#111827;border:2px solid #111827",
		"#808080":  "background:#2563EB;color:#FFFFFF;border:2px solid #2563EB",
		"":         "background:#2563EB;color:#FFFFFF;border:2px solid #2563EB",
		"nonsense": "background:#2563EB;color:#FFFFFF;border:2px solid #2563EB",
	} {
		m, err := s.Render("en", templates.Data{Brand: brand.Brand{DisplayName: "S", Color: color}, FeedbackURL: "https://t.example/f"})
		require.NoError(t, err)
		cta := inviteElements(inviteHTML(t, m.HTML), func(n *html.Node) bool { return n.DataAtom == atom.A && inviteAttr(n, "href") == "https://t.example/f" })
		require.Len(t, cta, 1)
		assert.Contains(t, inviteAttr(cta[0], "style"), want, color)
	}
}

func TestRenderBrandLogoAndName(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	for _, tc := range []struct {
		name     string
		brand    brand.Brand
		logo     bool
		nameLine bool
	}{
		{"https logo", inviteShop, true, false},
		{"http logo: left out, name instead", brand.Brand{DisplayName: "Nordlicht Outdoor", LogoURL: "http://cdn.example/logo.png"}, false, true},
		{"no logo: the name", brand.Brand{DisplayName: "Nordlicht Outdoor"}, false, true},
		{"no brand", brand.Brand{}, false, false},
	} {
		m, err := s.Render("en", templates.Data{Brand: tc.brand, FeedbackURL: "https://t.example/f"})
		require.NoError(t, err)
		doc := inviteHTML(t, m.HTML)
		assert.Equal(t, tc.logo, len(inviteElements(doc, func(n *html.Node) bool { return n.DataAtom == atom.Img })) == 1, tc.name)
		nameCells := inviteElements(doc, func(n *html.Node) bool { return n.DataAtom == atom.Td && inviteText(n) == "Nordlicht Outdoor" })
		assert.Equal(t, tc.nameLine, len(nameCells) == 1, tc.name)
	}
}

func TestRenderEscapesHostileShop(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	m, err := s.Render("en", templates.Data{
		Brand:       brand.Brand{DisplayName: "<script>x</script> Bcc: v@example.com", LogoURL: `https://x.example/l.png" onerror="alert(1)`, Color: "red;}"},
		FeedbackURL: "https://t.example/f", UnsubscribeURL: `javascript:alert(2)`,
	})
	require.NoError(t, err)
	assert.Equal(t, "How was your order at <script>x</script> Bcc: v@example.com?", m.Subject, "plain text, as written")
	assert.NotContains(t, m.HTML, "<script>")
	assert.NotContains(t, m.HTML, "javascript:")
	doc := inviteHTML(t, m.HTML)
	for _, n := range inviteElements(doc, func(*html.Node) bool { return true }) {
		for _, a := range n.Attr {
			assert.False(t, strings.HasPrefix(a.Key, "on"), "injected %s", a.Key)
		}
	}
	assert.NotContains(t, m.HTML, "red;}")
}

// TestInviteLocalesDefineTheSameTemplates: every language defines the
// same phrases; a regional file only overrides some of its language's.
func TestInviteLocalesDefineTheSameTemplates(t *testing.T) {
	t.Parallel()
	files, err := fs.Glob(os.DirFS("invite"), "*.tmpl")
	require.NoError(t, err)
	defined := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("invite", f))
		require.NoError(t, err)
		tpl, err := texttemplate.New("root").Parse(string(b))
		require.NoError(t, err, f)
		var names []string
		for _, d := range tpl.Templates() {
			if d.Name() != "root" {
				names = append(names, d.Name())
			}
		}
		slices.Sort(names)
		defined[strings.TrimSuffix(f, ".tmpl")] = names
	}
	require.Contains(t, defined, "en")
	for locale, names := range defined {
		lang, _, regional := strings.Cut(locale, "_")
		if regional {
			require.Contains(t, defined, lang, "%s overlays a language that exists", locale)
			for _, n := range names {
				assert.Contains(t, defined[lang], n, "%s overrides only what %s defines", locale, lang)
			}
			continue
		}
		assert.Equal(t, defined["en"], names, "%s defines what en defines", locale)
	}
	assert.Subset(t, defined["en"], []string{"subject", "subject-shop", "reminder-subject", "reminder-subject-shop", "greeting",
		"greeting-anonymous", "intro", "intro-shop", "reminder-intro", "reminder-intro-shop", "cta", "closing", "reason", "reason-shop",
		"unsubscribe-question", "unsubscribe-link"})
}
