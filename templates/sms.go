package templates

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	texttemplate "text/template"
	"unicode/utf8"

	"github.com/touchpoint/touchpoint/locale"
	"github.com/touchpoint/touchpoint/sms"
)

// The SMS templates: sms/<locale>.tmpl defines the phrases of the text
// message (prefix, greeting, greeting-anonymous, invite, reminder,
// opt-out), smsLayout arranges them around the text of the built-in
// template (greeting and invite or reminder) or of the shop's. As with the email, a regional locale
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
// who writes, then the template's text (the built-in one: the greeting
// and the locale's invite or reminder text), the link on a line of its
// own, and how to opt out. A shop's template replaces only the text.
const smsLayout = `
{{- define "message" -}}
{{with .ShopName}}{{template "prefix" .}}{{end -}}
{{.Text}}
{{.FeedbackURL}}
{{template "opt-out"}}
{{- end}}`

// SMSData is what a text message is rendered from.
type SMSData struct {
	ShopName    string // the account's display name; "" leaves the prefix out
	FirstName   string // "" gets a greeting without a name
	FeedbackURL string
	Reminder    bool // the reminder's text instead of the invite's
	// ProductName, OrderReference and EventType are the values of
	// {{productName}} (the first product's), {{orderReference}} and
	// {{eventType}}.
	ProductName, OrderReference, EventType string
	// Template is the shop's text (validated); "" renders the built-in one.
	Template string
}

// smsView is what smsLayout sees.
type smsView struct {
	ShopName, Text, FeedbackURL string
}

// SMSMessage is a rendered text message.
type SMSMessage struct {
	Locale string // the template's locale, e.g. "de"
	Text   string
	// Encoding and Segments are how the text is sent and what it costs
	// (sms.Segments).
	Encoding string
	Segments int
	// Builtin and Fallback are as for Message.
	Builtin  bool
	Fallback error
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

// Builtin is the built-in text of the SMS invite or reminder in the
// locale Pick chooses for locale, written as a shop would write it: the
// greeting and the locale's text, with {{firstName}} for the name.
func (s *SMSSet) Builtin(locale string, reminder bool) (string, error) {
	return s.builtin(s.Pick(locale), reminder)
}

func (s *SMSSet) builtin(locale string, reminder bool) (string, error) {
	name := "invite"
	if reminder {
		name = "reminder"
	}
	var b bytes.Buffer
	err := s.text[locale].ExecuteTemplate(&b, "greeting", "{{"+FirstName+"}}")
	if err == nil {
		b.WriteByte(' ')
		err = s.text[locale].ExecuteTemplate(&b, name, nil)
	}
	if err != nil {
		return "", fmt.Errorf("sms template %s: %w", locale, err)
	}
	return b.String(), nil
}

// Render renders the text message in the locale Pick chooses, from
// d.Template or, without one, the built-in text. The values inserted lose
// their surrounding spaces, nothing else: they hold no line break or
// control character, as package text refused those where they came in. A
// template that names the product is not used for
// an event without products (ErrNeedsProduct in SMSMessage.Fallback).
func (s *SMSSet) Render(locale string, d SMSData) (SMSMessage, error) {
	if d.FeedbackURL = strings.TrimSpace(d.FeedbackURL); d.FeedbackURL == "" {
		return SMSMessage{}, fmt.Errorf("sms: no feedback link")
	}
	vals := Values{FirstName: d.FirstName, ShopName: d.ShopName, ProductName: d.ProductName,
		OrderReference: d.OrderReference, EventType: d.EventType}.trimmed()
	locale = s.Pick(locale)
	m := SMSMessage{Locale: locale}
	text := d.Template
	switch {
	case text == "":
		m.Builtin = true
	case vals.ProductName == "" && uses(text, ProductName):
		m.Builtin, m.Fallback = true, ErrNeedsProduct
	}
	var err error
	if m.Builtin {
		if text, err = s.builtin(locale, d.Reminder); err != nil {
			return SMSMessage{}, err
		}
	}
	var neutral bytes.Buffer
	if err := s.text[locale].ExecuteTemplate(&neutral, "greeting-anonymous", nil); err != nil {
		return SMSMessage{}, fmt.Errorf("sms template %s: %w", locale, err)
	}
	v := smsView{ShopName: vals.ShopName, Text: strings.TrimSpace(expand(text, vals, neutral.String())), FeedbackURL: d.FeedbackURL}
	var b bytes.Buffer
	if err := s.text[locale].ExecuteTemplate(&b, "message", v); err != nil {
		return SMSMessage{}, fmt.Errorf("sms template %s: %w", locale, err)
	}
	m.Text = strings.TrimSpace(b.String())
	m.Encoding, m.Segments = sms.Segments(m.Text)
	return m, nil
}

// MaxSMSSegments is how many segments a text message with its link may
// cost: a shop's template that would cost more is refused.
const MaxSMSSegments = 2

// TooLongError is an SMS template whose message would cost more than
// MaxSMSSegments.
type TooLongError struct {
	Encoding   string // sms.EncodingGSM7 or sms.EncodingUCS2
	Segments   int
	Characters int
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("with the shop's name, the link and the opt-out line the message is %d characters in %s: %d segments, at most %d are allowed",
		e.Characters, e.Encoding, e.Segments, MaxSMSSegments)
}

// Fit renders a shop's SMS text with d (the sample values and a link
// of full length) and refuses it with a *TooLongError when the message
// would cost more than MaxSMSSegments.
func (s *SMSSet) Fit(locale, text string, d SMSData) (SMSMessage, error) {
	d.Template = text
	m, err := s.Render(locale, d)
	if err != nil {
		return SMSMessage{}, err
	}
	if m.Segments > MaxSMSSegments {
		return m, &TooLongError{Encoding: m.Encoding, Segments: m.Segments, Characters: utf8.RuneCountInString(m.Text)}
	}
	return m, nil
}
