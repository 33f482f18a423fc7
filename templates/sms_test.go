package templates_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	texttemplate "text/template"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/templates"
)

// A feedback link as the service makes it: an event ID and a 43-character
// base64url signature.
const smsLink = "https://feedback.example.com/feedback?event=evt-3f1c2a9e-7b4d-4c1a-9e2f-0a1b2c3d4e5f&sig=" +
	"q3Zt8Jc0vX1yR5nK7bW2eH4mL9pA6sD0fG3hJ5kL7zX"

const smsShop = "Nordlicht Outdoor & Camping AG" // 30 characters

func newSMS(t *testing.T) *templates.SMSSet {
	t.Helper()
	s, err := templates.NewSMS()
	require.NoError(t, err)
	return s
}

func TestSMSEveryLocaleFitsTwoSegments(t *testing.T) {
	t.Parallel()
	require.Len(t, []rune(smsShop), 30)
	require.Len(t, smsLink, 132)
	s := newSMS(t)
	require.Subset(t, s.Locales(), []string{"en", "de", "da", "fr", "es", "nl"})
	for _, locale := range s.Locales() {
		for _, reminder := range []bool{false, true} {
			for _, name := range []string{"Maximilian", ""} {
				d := templates.SMSData{ShopName: smsShop, FirstName: name, FeedbackURL: smsLink, Reminder: reminder}
				m, err := s.Render(locale, d)
				require.NoError(t, err, locale)
				what := locale
				if reminder {
					what += " reminder"
				}
				assert.Equal(t, locale, m.Locale)
				assert.True(t, strings.HasPrefix(m.Text, smsShop), "%s: the shop first: %q", what, m.Text)
				assert.Contains(t, m.Text, name, what)
				lines := strings.Split(m.Text, "\n")
				require.Len(t, lines, 3, what)
				assert.Equal(t, smsLink, lines[1], "%s: the link on its own line", what)
				assert.Contains(t, lines[2], "STOP", "%s: the opt-out hint", what)
				enc, n := sms.Segments(m.Text)
				assert.Equal(t, sms.EncodingGSM7, enc, "%s: %q", what, m.Text)
				assert.LessOrEqual(t, n, 2, "%s: %q", what, m.Text)
				t.Logf("%s, %d segments, %d characters:\n%s", what, n, len([]rune(m.Text)), m.Text)
			}
		}
	}
}

func TestSMSInviteAndReminderDiffer(t *testing.T) {
	t.Parallel()
	s := newSMS(t)
	for _, locale := range s.Locales() {
		d := templates.SMSData{ShopName: smsShop, FirstName: "Jana", FeedbackURL: smsLink}
		invite, err := s.Render(locale, d)
		require.NoError(t, err)
		d.Reminder = true
		reminder, err := s.Render(locale, d)
		require.NoError(t, err)
		assert.NotEqual(t, invite.Text, reminder.Text, locale)
	}
}

// Every locale file defines the same templates; a regional one defines
// only templates its language has.
func TestSMSLocalesDefineTheSameTemplates(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("sms", "*.tmpl"))
	require.NoError(t, err)
	defined := map[string][]string{}
	for _, f := range files {
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		tmpl, err := texttemplate.New("").Parse(string(body))
		require.NoError(t, err, f)
		var names []string
		for _, d := range tmpl.Templates() {
			if d.Name() != "" {
				names = append(names, d.Name())
			}
		}
		slices.Sort(names)
		defined[strings.TrimSuffix(filepath.Base(f), ".tmpl")] = names
	}
	want := defined["en"]
	require.Equal(t, []string{"greeting", "greeting-anonymous", "invite", "opt-out", "prefix", "reminder"}, want)
	for locale, names := range defined {
		if lang, _, regional := strings.Cut(locale, "_"); regional {
			require.Contains(t, defined, lang, locale)
			assert.Subset(t, defined[lang], names, locale)
			continue
		}
		assert.Equal(t, want, names, locale)
	}
}

func TestSMSPick(t *testing.T) {
	t.Parallel()
	s := newSMS(t)
	for in, want := range map[string]string{
		"de_AT": "de_AT",
		"de-at": "de_AT",
		"de_CH": "de",
		"fr_CA": "fr",
		"nl_BE": "nl",
		"es_MX": "es",
		"en_US": "en",
		"pt_BR": "en",
		"":      "en",
	} {
		assert.Equal(t, want, s.Pick(in), in)
	}
	at, err := s.Render("de_AT", templates.SMSData{FeedbackURL: smsLink})
	require.NoError(t, err)
	de, err := s.Render("de", templates.SMSData{FeedbackURL: smsLink})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(at.Text, "Grüß Gott, "), at.Text)
	assert.True(t, strings.HasPrefix(de.Text, "Guten Tag, "), de.Text)
	assert.Equal(t, strings.TrimPrefix(de.Text, "Guten Tag, "), strings.TrimPrefix(at.Text, "Grüß Gott, "),
		"what de_AT leaves out comes from de")
}

// TestSMSRenderTrimsValues: the values lose the white space around them
// and nothing else (what they may hold was decided when they came in).
func TestSMSRenderTrimsValues(t *testing.T) {
	t.Parallel()
	s := newSMS(t)
	m, err := s.Render("en", templates.SMSData{
		ShopName:    "  Shop  & Söhne ",
		FirstName:   " Jana\u200d ",
		FeedbackURL: " https://x.example/f?e=1\n",
	})
	require.NoError(t, err)
	assert.Equal(t, "Shop  & Söhne: Hi Jana\u200d, thanks for your purchase! How did it go? It only takes a minute to tell us:\n"+
		"https://x.example/f?e=1\nReply STOP to opt out.", m.Text)
}

func TestSMSRenderWithoutShopOrName(t *testing.T) {
	t.Parallel()
	s := newSMS(t)
	m, err := s.Render("nl", templates.SMSData{FeedbackURL: smsLink, Reminder: true})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(m.Text, "Hallo, we horen"), m.Text)
	_, err = s.Render("nl", templates.SMSData{ShopName: smsShop, FeedbackURL: " \n"})
	assert.Error(t, err, "a message without its link")
}
