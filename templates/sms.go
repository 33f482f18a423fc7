package templates

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	texttemplate "text/template"

	"github.com/touchpoint/touchpoint/locale"
)

// The SMS templates: sms/<locale>.tmpl defines the phrases of the text
// message (prefix, greeting, greeting-anonymous, invite, reminder,
// opt-out), smsLayout arranges them. As with the email, a regional locale
// (de_AT) is parsed over its language and defines only what differs.
//
// Only GSM-7 characters belong in them — no typographic quotes or dashes,
// no accents outside the GSM alphabet (é and ü are in it, á and ç are
// not): one other character makes the whole message UCS-2, which more
// than doubles its cost. With a feedback link of about 130 characters and
// a shop name of 30, every message fits in two segments; the tests check
// both.
//
//go:embed sms
var smsFiles embed.FS

// smsLayout is the message: the shop's name first, so the customer knows
// who writes, then the greeting and the locale's text, the link on a line
// of its own, and how to opt out.
const smsLayout = `
{{- define "message" -}}
{{with .ShopName}}{{template "prefix" .}}{{end -}}
{{if .FirstName}}{{template "greeting" .FirstName}}{{else}}{{template "greeting-anonymous"}}{{end}} {{if .Reminder}}{{template "reminder" .}}{{else}}{{template "invite" .}}{{end}}
{{.FeedbackURL}}
{{template "opt-out"}}
{{- end}}`

// SMSData is what a text message is rendered from.
type SMSData struct {
	ShopName    string // the account's display name; "" leaves the prefix out
	FirstName   string // "" gets a greeting without a name
	FeedbackURL string
	Reminder    bool // the reminder's text instead of the invite's
}

// SMSMessage is a rendered text message.
type SMSMessage struct {
	Locale string // the template's locale, e.g. "de"
	Text   string
}

// SMSSet holds the parsed SMS templates of every locale.
type SMSSet struct {
	text map[string]*texttemplate.Template
}

// NewSMS parses the embedded SMS templates.
func NewSMS() (*SMSSet, error) {
	names, err := fs.Glob(smsFiles, "sms/*.tmpl")
	if err != nil {
		return nil, err
	}
	s := &SMSSet{text: map[string]*texttemplate.Template{}}
	for _, name := range names {
		locale := strings.TrimSuffix(path.Base(name), ".tmpl")
		sources := []string{name}
		if lang, _, regional := strings.Cut(locale, "_"); regional {
			sources = []string{"sms/" + lang + ".tmpl", name}
		}
		t, err := texttemplate.New(locale).Option("missingkey=error").Parse(smsLayout)
		if err != nil {
			return nil, fmt.Errorf("sms layout: %w", err)
		}
		for _, src := range sources {
			body, err := smsFiles.ReadFile(src)
			if err == nil {
				_, err = t.Parse(string(body))
			}
			if err != nil {
				return nil, fmt.Errorf("template %s: %w", src, err)
			}
		}
		s.text[locale] = t
	}
	if s.text[DefaultLocale] == nil {
		return nil, fs.ErrNotExist
	}
	return s, nil
}

// Locales lists the locales with SMS templates, sorted.
func (s *SMSSet) Locales() []string { return locale.Names(s.text) }

// Pick chooses the template for a locale as the email's Set.Pick does:
// the exact locale ("de_AT", also written "de-at"), else its language
// ("de"), else English.
func (s *SMSSet) Pick(requested string) string {
	return locale.Pick(requested, func(l string) bool { return s.text[l] != nil })
}

// Render renders the text message in the locale Pick chooses. The values
// inserted lose their control characters (a line break smuggled in
// through a name) and surrounding spaces.
func (s *SMSSet) Render(locale string, d SMSData) (SMSMessage, error) {
	if d.FeedbackURL = smsValue(d.FeedbackURL); d.FeedbackURL == "" {
		return SMSMessage{}, fmt.Errorf("sms: no feedback link")
	}
	d.ShopName, d.FirstName = smsValue(d.ShopName), smsValue(d.FirstName)
	locale = s.Pick(locale)
	var b bytes.Buffer
	if err := s.text[locale].ExecuteTemplate(&b, "message", d); err != nil {
		return SMSMessage{}, fmt.Errorf("sms template %s: %w", locale, err)
	}
	return SMSMessage{Locale: locale, Text: strings.TrimSpace(b.String())}, nil
}

// smsValue makes an inserted value one clean line: control characters
// (C0, DEL, C1) and bidirectional overrides, which could reorder what the
// customer reads, become spaces, and runs of spaces one.
func smsValue(v string) string {
	v = strings.Map(func(r rune) rune {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return ' '
		}
		return r
	}, v)
	return strings.Join(strings.Fields(v), " ")
}
