package templates_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/touchpoint/touchpoint/templates"
)

func newSet(t *testing.T) *templates.Set {
	t.Helper()
	s, err := templates.New()
	require.NoError(t, err)
	return s
}

func TestPick(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	assert.Subset(t, s.Locales(), []string{"en", "de", "da", "fr", "es", "nl"})
	for in, want := range map[string]string{
		"de_AT": "de_AT", // present: the exact locale
		"de-at": "de_AT",
		"de_CH": "de", // absent: its language
		"DE":    "de",
		"fr_CA": "fr",
		"nl_BE": "nl",
		"da_DK": "da",
		"es_MX": "es",
		"en_US": "en",
		"pt_BR": "en", // unknown language: English
		"":      "en",
		"x":     "en",
	} {
		assert.Equal(t, want, s.Pick(in), in)
	}
}

func TestRenderEveryLocale(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	d := templates.Data{
		FirstName:   "Jana",
		Products:    []templates.Product{{Name: "Trail shoe", ImageURL: "https://cdn.example/shoe.png", URL: "https://shop.example/shoe"}},
		FeedbackURL: "https://touchpoint.example/feedback?event=evt-1&sig=abc",
	}
	for _, locale := range s.Locales() {
		m, err := s.Render(locale, d)
		require.NoError(t, err, locale)
		assert.Equal(t, locale, m.Locale)
		assert.NotEmpty(t, m.Subject, locale)
		assert.NotContains(t, m.Subject, "\n", locale)
		for _, part := range []string{m.Text, m.HTML} {
			assert.Contains(t, part, "Jana", locale)
			assert.Contains(t, part, "Trail shoe", locale)
		}
		assert.Contains(t, m.Text, d.FeedbackURL, locale)
		assert.Contains(t, m.HTML, `href="https://touchpoint.example/feedback?event=evt-1&amp;sig=abc"`, locale)
		assert.Contains(t, m.HTML, `src="https://cdn.example/shoe.png"`, locale)
		assert.Contains(t, m.HTML, `lang="`+strings.ReplaceAll(locale, "_", "-")+`"`, locale)
	}
}

func TestRenderRegionalOverridesLanguage(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	at, err := s.Render("de_AT", templates.Data{FeedbackURL: "https://x.example/f"})
	require.NoError(t, err)
	de, err := s.Render("de_DE", templates.Data{FeedbackURL: "https://x.example/f"})
	require.NoError(t, err)
	assert.Equal(t, "de_AT", at.Locale)
	assert.Contains(t, at.Text, "Grüß Gott,")
	assert.Equal(t, de.Subject, at.Subject, "what de_AT leaves out comes from de")
	assert.Contains(t, de.Text, "Guten Tag,")
}

func TestRenderWithoutNameOrProducts(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	m, err := s.Render("en_GB", templates.Data{FeedbackURL: "https://x.example/f"})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(m.Text, "Hello,\n"), m.Text)
	h1 := inviteElements(inviteHTML(t, m.HTML), func(n *html.Node) bool { return n.DataAtom == atom.H1 })
	require.Len(t, h1, 1)
	assert.Equal(t, "Hello,", inviteText(h1[0]), "the greeting heads the mail")
	assert.NotContains(t, m.Text, "*")
	assert.NotContains(t, m.HTML, "<img")
}

func TestRenderEscapesHostileInput(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	m, err := s.Render("en", templates.Data{
		FirstName: `<script>alert("name")</script>`,
		Products: []templates.Product{{
			Name:     `"><img src=x onerror=alert(1)>`,
			ImageURL: `javascript:alert(2)`,
			URL:      `" onmouseover="alert(3)`,
		}},
		FeedbackURL: "https://x.example/f",
	})
	require.NoError(t, err)
	assert.NotContains(t, m.HTML, "<script>")
	assert.Contains(t, m.HTML, "&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;")
	assert.NotContains(t, m.HTML, "<img src=x")
	assert.Contains(t, m.HTML, "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;")
	assert.NotContains(t, m.HTML, "javascript:")
	assert.NotContains(t, m.HTML, `" onmouseover="`)
	// The text part is plain text: shown as typed, nothing to execute.
	assert.Contains(t, m.Text, `Hi <script>alert("name")</script>,`)
}
