package templates_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/templates"
)

// shopTemplate is a shop's own invite, using every placeholder.
var shopTemplate = templates.Content{
	Subject:     "{{firstName}}, how was your {{productName}}?",
	Preheader:   "Order {{orderReference}} – two minutes of your time",
	Heading:     "Hi {{firstName}},",
	Body:        "thanks for shopping at {{shopName}}!\nYour {{eventType}} is done.\n\nTell us how it went.",
	ButtonLabel: "Rate {{productName}}",
}

func fieldErrors(t *testing.T, err error) map[string]string {
	t.Helper()
	var errs templates.Errors
	require.True(t, errors.As(err, &errs), "%v", err)
	out := map[string]string{}
	for _, e := range errs {
		out[e.Field] = e.Message
	}
	return out
}

func TestValidateAcceptsAndNormalises(t *testing.T) {
	t.Parallel()
	c, err := templates.Validate(templates.KindInvite, templates.Content{
		Subject: "  How was it, {{ firstName }}?  ", Heading: "Hello", ButtonLabel: "Go",
		Body: "\r\n First line\r\nsecond line   \r\n\r\n\r\n\r\nNext paragraph\t\n\n",
	})
	require.NoError(t, err)
	assert.Equal(t, "How was it, {{ firstName }}?", c.Subject)
	assert.Equal(t, "First line\nsecond line\n\nNext paragraph", c.Body, "CR LF become LF, blank lines one, spaces around go")

	c, err = templates.Validate(templates.KindInvite, templates.Content{Subject: "S", Heading: "H", ButtonLabel: "Go",
		Body: "a\x00b\x1b[2J \u202eevil\u2069\u2028next"})
	require.NoError(t, err, "a body is multi-line text: cleaned, not refused")
	assert.Equal(t, "ab[2J evil\nnext", c.Body)

	c, err = templates.Validate(templates.KindSMSReminder, templates.Content{Text: "Hi {{firstName}}! Still time to tell {{shopName}}:"})
	require.NoError(t, err)
	assert.Equal(t, "Hi {{firstName}}! Still time to tell {{shopName}}:", c.Text)
}

func TestValidateRefuses(t *testing.T) {
	t.Parallel()
	valid := templates.Content{Subject: "S", Heading: "H", Body: "B", ButtonLabel: "L"}
	with := func(f func(*templates.Content)) templates.Content {
		c := valid
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name  string
		kind  templates.Kind
		c     templates.Content
		field string
		want  string
	}{
		{"empty subject", templates.KindInvite, with(func(c *templates.Content) { c.Subject = "  " }), "subject", "must not be empty"},
		{"empty heading", templates.KindReminder, with(func(c *templates.Content) { c.Heading = "" }), "heading", "must not be empty"},
		{"empty body", templates.KindInvite, with(func(c *templates.Content) { c.Body = "\n\n" }), "body", "must not be empty"},
		{"empty button", templates.KindInvite, with(func(c *templates.Content) { c.ButtonLabel = "" }), "buttonLabel", "must not be empty"},
		{"CR LF in the subject", templates.KindInvite, with(func(c *templates.Content) { c.Subject = "Hi\r\nBcc: victim@example.com" }), "subject", "must be one line"},
		{"LF ending the subject", templates.KindInvite, with(func(c *templates.Content) { c.Subject = "Hi\n" }), "subject", "must be one line"},
		{"NUL in the subject", templates.KindInvite, with(func(c *templates.Content) { c.Subject = "Hi\x00" }), "subject", "must not contain control characters"},
		{"escape in the subject", templates.KindInvite, with(func(c *templates.Content) { c.Subject = "Hi \x1b[2J" }), "subject", "must not contain control characters such as line breaks (U+001B at character 4)"},
		{"C1 control in the subject", templates.KindInvite, with(func(c *templates.Content) { c.Subject = "Hi \u0085" }), "subject", "must not contain control characters"},
		{"override in the heading", templates.KindInvite, with(func(c *templates.Content) { c.Heading = "Hi \u202egnp.exe" }), "heading", "must not contain bidirectional overrides or isolates (U+202E at character 4)"},
		{"isolate in the preheader", templates.KindInvite, with(func(c *templates.Content) { c.Preheader = "\u2067x" }), "preheader", "bidirectional"},
		{"line break in the button", templates.KindInvite, with(func(c *templates.Content) { c.ButtonLabel = "Rate\nnow" }), "buttonLabel", "one line"},
		{"invalid UTF-8", templates.KindInvite, with(func(c *templates.Content) { c.Body = "a\xffb" }), "body", "UTF-8"},
		{"long subject", templates.KindInvite, with(func(c *templates.Content) { c.Subject = strings.Repeat("é", 151) }), "subject", "at most 150 characters (has 151)"},
		{"long preheader", templates.KindInvite, with(func(c *templates.Content) { c.Preheader = strings.Repeat("x", 201) }), "preheader", "at most 200"},
		{"long heading", templates.KindInvite, with(func(c *templates.Content) { c.Heading = strings.Repeat("x", 151) }), "heading", "at most 150"},
		{"long body", templates.KindInvite, with(func(c *templates.Content) { c.Body = strings.Repeat("x", 5001) }), "body", "at most 5000"},
		{"long button", templates.KindInvite, with(func(c *templates.Content) { c.ButtonLabel = strings.Repeat("x", 41) }), "buttonLabel", "at most 40"},
		{"unknown placeholder", templates.KindInvite, with(func(c *templates.Content) { c.Body = "Dear {{customer.email}}" }), "body", "unknown placeholder {{customer.email}}"},
		{"template action", templates.KindInvite, with(func(c *templates.Content) { c.Subject = `{{define "x"}}` }), "subject", `unknown placeholder {{define "x"}}`},
		{"wrong case", templates.KindInvite, with(func(c *templates.Content) { c.Heading = "Hi {{firstname}}," }), "heading", "unknown placeholder {{firstname}}"},
		{"half a placeholder", templates.KindInvite, with(func(c *templates.Content) { c.Body = "Hi {{firstName}" }), "body", "a placeholder is written {{name}}"},
		{"name inside a sentence", templates.KindInvite, with(func(c *templates.Content) { c.Body = "Thanks {{firstName}} for your order" }), "body", "{{firstName}} must be part of a greeting"},
		{"name after four words", templates.KindInvite, with(func(c *templates.Content) { c.Heading = "We hope you liked it {{firstName}}!" }), "heading", "must be part of a greeting"},
		{"name after a sentence", templates.KindInvite, with(func(c *templates.Content) { c.Heading = "Thanks. Hi {{firstName}}," }), "heading", "must be part of a greeting"},
		{"two placeholders together", templates.KindInvite, with(func(c *templates.Content) { c.Heading = "Hi {{firstName}}{{shopName}}" }), "heading", "must be part of a greeting"},
		{"SMS fields in an email", templates.KindInvite, with(func(c *templates.Content) { c.Text = "hi" }), "text", "text is for SMS templates"},
		{"email fields in an SMS", templates.KindSMSInvite, templates.Content{Text: "hi", Subject: "S"}, "subject", "only text"},
		{"empty SMS", templates.KindSMSInvite, templates.Content{}, "text", "must not be empty"},
		{"long SMS", templates.KindSMSInvite, templates.Content{Text: strings.Repeat("x", 481)}, "text", "at most 480"},
	} {
		_, err := templates.Validate(tc.kind, tc.c)
		require.Error(t, err, tc.name)
		errs := fieldErrors(t, err)
		assert.Contains(t, errs[tc.field], tc.want, "%s: %v", tc.name, err)
	}

	// Every bad field is named, in the order of the fields.
	_, err := templates.Validate(templates.KindInvite, templates.Content{Subject: "A\nB", Body: "{{x}}"})
	var errs templates.Errors
	require.ErrorAs(t, err, &errs)
	var fields []string
	for _, e := range errs {
		fields = append(fields, e.Field)
	}
	assert.Equal(t, []string{"subject", "heading", "body", "buttonLabel"}, fields)
}

// TestGreetingWithoutAName: where the first name is empty, an opening
// greeting becomes the locale's neutral greeting and a name at the end of
// a sentence is left out, in every field.
func TestGreetingWithoutAName(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	for _, tc := range []struct {
		locale, heading, with, without string
	}{
		{"en", "Hi {{firstName}},", "Hi Jana,", "Hello,"},
		{"en", "Dear {{firstName}}", "Dear Jana", "Hello,"},
		{"en", "{{firstName}}, how was your order?", "Jana, how was your order?", "Hello, how was your order?"},
		{"en", "Hey there {{firstName}}! Welcome back.", "Hey there Jana! Welcome back.", "Hello! Welcome back."},
		{"en", "How was your order, {{firstName}}?", "How was your order, Jana?", "How was your order?"},
		{"en", "Thanks, {{firstName}}", "Thanks, Jana", "Thanks"},
		{"de", "Liebe(r) {{firstName}},", "Liebe(r) Jana,", "Guten Tag,"},
		{"de_AT", "Hallo {{firstName}}!", "Hallo Jana!", "Grüß Gott!"},
		{"nl", "Hoi {{firstName}},", "Hoi Jana,", "Beste klant,"},
		{"fr", "Comment était-ce, {{firstName}} ?", "Comment était-ce, Jana ?", "Comment était-ce ?"},
		{"es", "Hola, {{firstName}}:", "Hola, Jana:", "Hola:"},
		{"da", "Kære {{firstName}}", "Kære Jana", "Hej,"},
	} {
		c, err := templates.Validate(templates.KindInvite, templates.Content{Subject: tc.heading, Heading: tc.heading, Body: tc.heading, ButtonLabel: "Go"})
		require.NoError(t, err, tc.heading)
		for name, want := range map[string]string{"Jana": tc.with, "": tc.without} {
			m, err := s.Render(tc.locale, templates.Data{FirstName: name, FeedbackURL: "https://t.example/f", Template: &c})
			require.NoError(t, err)
			assert.Equal(t, want, m.Subject, "%s %q name=%q", tc.locale, tc.heading, name)
			assert.True(t, strings.HasPrefix(m.Text, want+"\n\n"+want+"\n"), "%s %q: %q", tc.locale, tc.heading, m.Text)
			h1 := inviteElements(inviteHTML(t, m.HTML), func(n *html.Node) bool { return n.DataAtom == atom.H1 })
			assert.Equal(t, want, inviteText(h1[0]))
		}
	}
	// A name of spaces only is no name.
	c := shopTemplate
	m, err := s.Render("en", templates.Data{FirstName: " \t", Products: []templates.Product{{Name: "Tent"}}, FeedbackURL: "https://t.example/f", Template: &c})
	require.NoError(t, err)
	assert.Equal(t, "Hello, how was your Tent?", m.Subject)
}

func shopData() templates.Data {
	return templates.Data{
		FirstName: "Jana", Brand: inviteShop, OrderReference: "ORD-1042", EventType: "checkout",
		Products:       []templates.Product{{Name: "Trail shoe", ImageURL: "https://cdn.example/shoe.png", URL: "https://shop.example/shoe"}, {Name: "Socks"}},
		FeedbackURL:    "https://t.example/feedback?event=evt-1&sig=s",
		UnsubscribeURL: "https://t.example/unsubscribe?event=evt-1&sig=u",
	}
}

// TestRenderShopTemplate: the shop's words fill the layout's slots, and
// the layout keeps everything else.
func TestRenderShopTemplate(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	d := shopData()
	c, err := templates.Validate(templates.KindInvite, shopTemplate)
	require.NoError(t, err)
	d.Template = &c
	m, err := s.Render("de_AT", d)
	require.NoError(t, err)
	assert.False(t, m.Builtin)
	assert.Equal(t, "de_AT", m.Locale)
	assert.Equal(t, "Jana, how was your Trail shoe?", m.Subject)
	assert.Equal(t, "Hi Jana,\n\nthanks for shopping at Nordlicht Outdoor!\nYour checkout is done.\n\nTell us how it went.\n\n"+
		"  * Trail shoe\n  * Socks\n\nRate Trail shoe:\n\n  https://t.example/feedback?event=evt-1&sig=s\n\n-- \n"+
		"Sie erhalten diese E-Mail, weil Sie vor Kurzem bei Nordlicht Outdoor bestellt haben.\n"+
		"Sie möchten solche E-Mails nicht mehr erhalten? Abmelden:\n  https://t.example/unsubscribe?event=evt-1&sig=u\n", m.Text)

	doc := inviteHTML(t, m.HTML)
	assert.Equal(t, "Jana, how was your Trail shoe?", inviteText(inviteElements(doc, func(n *html.Node) bool { return n.DataAtom == atom.Title })[0]))
	pre := inviteElements(doc, func(n *html.Node) bool {
		return n.DataAtom == atom.Div && strings.Contains(inviteAttr(n, "style"), "display:none")
	})
	require.Len(t, pre, 1, "the preheader, hidden")
	assert.Equal(t, "Order ORD-1042 – two minutes of your time", inviteText(pre[0]))
	paras := inviteElements(doc, func(n *html.Node) bool { return n.DataAtom == atom.P })
	assert.Equal(t, "thanks for shopping at Nordlicht Outdoor!Your checkout is done.", inviteText(paras[0]))
	assert.Len(t, inviteElements(paras[0], func(n *html.Node) bool { return n.DataAtom == atom.Br }), 1, "a line break stays one")
	assert.Equal(t, "Tell us how it went.", inviteText(paras[1]))
	// The layout's parts are all there: logo, products, button with the
	// feedback link, the footer with the unsubscribe link.
	assert.Len(t, inviteElements(doc, func(n *html.Node) bool { return n.DataAtom == atom.Img && inviteAttr(n, "src") == inviteShop.LogoURL }), 1)
	assert.Len(t, inviteElements(doc, func(n *html.Node) bool {
		return n.DataAtom == atom.Img && inviteAttr(n, "src") == "https://cdn.example/shoe.png"
	}), 1)
	cta := inviteElements(doc, func(n *html.Node) bool { return n.DataAtom == atom.A && inviteAttr(n, "href") == d.FeedbackURL })
	require.Len(t, cta, 1)
	assert.Equal(t, "Rate Trail shoe", inviteText(cta[0]))
	assert.Contains(t, inviteAttr(cta[0], "style"), "background:#14532D", "the shop's colour")
	unsub := inviteElements(doc, func(n *html.Node) bool { return n.DataAtom == atom.A && inviteAttr(n, "href") == d.UnsubscribeURL })
	require.Len(t, unsub, 1)
	assert.Equal(t, "Abmelden", inviteText(unsub[0]))
}

// TestRenderShopTemplateEscapes: what the shop writes is text, and so is
// every value: markup shows as typed, nothing runs, no header is added.
func TestRenderShopTemplateEscapes(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	c, err := templates.Validate(templates.KindInvite, templates.Content{
		Subject:     "<b>{{shopName}}</b> & {{productName}}",
		Preheader:   "</div><script>alert(1)</script>",
		Heading:     "Hi {{firstName}},",
		Body:        "<a href=\"javascript:alert(2)\">click</a> ]]> {{orderReference}}\n\n<img src=x onerror=alert(3)>",
		ButtonLabel: "\"><script>alert(4)</script>",
	})
	require.NoError(t, err)
	d := shopData()
	d.Template = &c
	d.FirstName = "<script>alert(5)</script>"
	d.Brand.DisplayName = "Shop & Co <i> Bcc: victim@example.com"
	d.OrderReference = "</p><p onclick=alert(6)>"
	d.Products = []templates.Product{{Name: "</td><td>exe.shoe"}}
	m, err := s.Render("en", d)
	require.NoError(t, err)
	assert.Equal(t, "<b>Shop & Co <i> Bcc: victim@example.com</b> & </td><td>exe.shoe", m.Subject, "plain text, as written")
	assert.NotContains(t, m.HTML, "<script")
	assert.NotContains(t, m.HTML, `href="javascript`)
	assert.NotContains(t, m.HTML, "<img src=x")
	assert.NotContains(t, m.HTML, "</td><td>exe")
	doc := inviteHTML(t, m.HTML)
	for _, n := range inviteElements(doc, func(*html.Node) bool { return true }) {
		assert.NotEqual(t, atom.Script, n.DataAtom)
		for _, a := range n.Attr {
			assert.False(t, strings.HasPrefix(a.Key, "on"), "injected %s", a.Key)
		}
	}
	h1 := inviteElements(doc, func(n *html.Node) bool { return n.DataAtom == atom.H1 })
	assert.Equal(t, "Hi <script>alert(5)</script>,", inviteText(h1[0]), "the name as typed, as text")
	paras := inviteElements(doc, func(n *html.Node) bool { return n.DataAtom == atom.P })
	assert.Equal(t, `<a href="javascript:alert(2)">click</a> ]]> </p><p onclick=alert(6)>`, inviteText(paras[0]))
	// The text part is plain text: as typed.
	assert.Contains(t, m.Text, `<a href="javascript:alert(2)">click</a> ]]> </p><p onclick=alert(6)>`)
}

// TestTemplateNeedsAProduct: a template naming the product is not used
// for an event without one; the built-in template reads well without.
func TestTemplateNeedsAProduct(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	d := shopData()
	d.Products = nil
	c := shopTemplate
	d.Template = &c
	m, err := s.Render("en", d)
	require.NoError(t, err)
	assert.True(t, m.Builtin)
	assert.ErrorIs(t, m.Fallback, templates.ErrNeedsProduct)
	assert.Equal(t, "How was your order at Nordlicht Outdoor?", m.Subject)

	ss := newSMS(t)
	sm, err := ss.Render("en", templates.SMSData{ShopName: "S", FeedbackURL: smsLink, Template: "How was the {{productName}}?"})
	require.NoError(t, err)
	assert.True(t, sm.Builtin)
	assert.ErrorIs(t, sm.Fallback, templates.ErrNeedsProduct)
}

// TestBuiltinIsATemplate: the built-in template, as GET shows it, is a
// template a shop could store, and rendering it as the shop's gives the
// very message the built-in one gives — so the two cannot drift apart.
func TestBuiltinIsATemplate(t *testing.T) {
	t.Parallel()
	s := newSet(t)
	ss := newSMS(t)
	for _, locale := range s.Locales() {
		for _, reminder := range []bool{false, true} {
			kind := templates.KindInvite
			if reminder {
				kind = templates.KindReminder
			}
			b, err := s.Builtin(locale, reminder)
			require.NoError(t, err)
			c, err := templates.Validate(kind, b)
			require.NoError(t, err, "%s %s: %+v", locale, kind, b)
			assert.Equal(t, b, c, "already normal")
			for _, name := range []string{"Jana", ""} {
				d := shopData()
				d.FirstName, d.Reminder = name, reminder
				want, err := s.Render(locale, d)
				require.NoError(t, err)
				assert.True(t, want.Builtin)
				d.Template = &c
				got, err := s.Render(locale, d)
				require.NoError(t, err)
				assert.False(t, got.Builtin)
				assert.Equal(t, want.Subject, got.Subject)
				assert.Equal(t, want.Text, got.Text)
				assert.Equal(t, want.HTML, got.HTML)
			}
		}
	}
	for _, locale := range ss.Locales() {
		for _, reminder := range []bool{false, true} {
			kind := templates.KindSMSInvite
			if reminder {
				kind = templates.KindSMSReminder
			}
			text, err := ss.Builtin(locale, reminder)
			require.NoError(t, err)
			c, err := templates.Validate(kind, templates.Content{Text: text})
			require.NoError(t, err, "%s %s: %q", locale, kind, text)
			for _, name := range []string{"Jana", ""} {
				d := templates.SMSData{ShopName: smsShop, FirstName: name, FeedbackURL: smsLink, Reminder: reminder}
				want, err := ss.Render(locale, d)
				require.NoError(t, err)
				d.Template = c.Text
				got, err := ss.Render(locale, d)
				require.NoError(t, err)
				assert.Equal(t, want.Text, got.Text, "%s %s %q", locale, kind, name)
			}
		}
	}
}

func TestRenderShopSMS(t *testing.T) {
	t.Parallel()
	ss := newSMS(t)
	c, err := templates.Validate(templates.KindSMSInvite, templates.Content{Text: "Hej {{firstName}}! Hvordan var {{productName}} (ordre {{orderReference}})?"})
	require.NoError(t, err)
	d := templates.SMSData{ShopName: "Nordlicht", FirstName: " Freja ", ProductName: "Telt", OrderReference: "A-1",
		FeedbackURL: smsLink, Template: c.Text}
	m, err := ss.Render("da", d)
	require.NoError(t, err)
	assert.Equal(t, "Nordlicht: Hej Freja! Hvordan var Telt (ordre A-1)?\n"+smsLink+"\nSvar STOP for at afmelde.", m.Text)
	assert.Equal(t, sms.EncodingGSM7, m.Encoding)
	assert.Equal(t, 2, m.Segments)

	d.FirstName = ""
	m, err = ss.Render("da", d)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(m.Text, "Nordlicht: Hej! Hvordan var"), m.Text)
}

// TestSMSFit: a shop's text must leave room for the shop's name, the link
// and the opt-out line within two segments, counted as the provider
// counts them.
func TestSMSFit(t *testing.T) {
	t.Parallel()
	ss := newSMS(t)
	d := templates.SMSData{ShopName: smsShop, FirstName: "Maximilian", FeedbackURL: smsLink}
	m, err := ss.Fit("en", "Hi {{firstName}}, how did we do?", d)
	require.NoError(t, err)
	assert.Equal(t, 2, m.Segments)

	long := strings.Repeat("a", 130)
	_, err = ss.Fit("en", long, d)
	var tooLong *templates.TooLongError
	require.ErrorAs(t, err, &tooLong)
	assert.Equal(t, sms.EncodingGSM7, tooLong.Encoding)
	assert.Equal(t, 3, tooLong.Segments)
	assert.Contains(t, err.Error(), "3 segments, at most 2")

	// One character outside GSM-7 makes the whole message UCS-2, where
	// the same words no longer fit.
	_, err = ss.Fit("en", "Hi {{firstName}}, how did we do? 🙂", d)
	require.ErrorAs(t, err, &tooLong)
	assert.Equal(t, sms.EncodingUCS2, tooLong.Encoding)
	assert.Equal(t, 4, tooLong.Segments)
}

func TestChoose(t *testing.T) {
	t.Parallel()
	stored := func(text string, version int) templates.Stored {
		content, err := templates.EncodeContent(templates.Content{Text: text})
		require.NoError(t, err)
		return templates.Stored{Version: version, Content: content}
	}
	et, acc := stored("event type", 3), stored("account", 7)
	c, err := templates.Choose(et, acc)
	require.NoError(t, err)
	assert.Equal(t, templates.SourceEventType, c.Source)
	assert.Equal(t, 3, c.Version)
	assert.Equal(t, "event type", c.Content.Text)
	c, err = templates.Choose(templates.Stored{}, acc)
	require.NoError(t, err)
	assert.Equal(t, templates.SourceAccount, c.Source)
	assert.Equal(t, 7, c.Version)
	assert.Equal(t, "account", c.Content.Text)
	c, err = templates.Choose(templates.Stored{}, templates.Stored{})
	require.NoError(t, err)
	assert.Equal(t, templates.Chosen{Source: templates.SourceBuiltin}, c)
	_, err = templates.Choose(templates.Stored{Version: 1, Content: []byte(`"not a template"`)}, acc)
	assert.Error(t, err, "content that does not decode")
}

func TestKindsAndLanguages(t *testing.T) {
	t.Parallel()
	for _, k := range templates.Kinds {
		got, ok := templates.ParseKind(string(k))
		assert.True(t, ok)
		assert.Equal(t, k, got)
	}
	_, ok := templates.ParseKind("email")
	assert.False(t, ok)
	assert.True(t, templates.KindSMSReminder.SMS() && templates.KindSMSReminder.Reminder())
	assert.False(t, templates.KindInvite.SMS() || templates.KindInvite.Reminder())
	assert.Equal(t, invite.SMS, templates.KindSMSInvite.Medium())
	assert.Equal(t, invite.Email, templates.KindReminder.Medium())
	s := newSet(t)
	for _, l := range s.Locales() {
		assert.True(t, templates.ValidLanguage(templates.Language(l)), l)
	}
	assert.ElementsMatch(t, []string{"en", "de", "da", "fr", "es", "nl"}, templates.Languages)
	assert.False(t, templates.ValidLanguage("de_AT"))
}
