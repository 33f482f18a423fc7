// Package templates renders invites from the built-in per-locale
// templates embedded in the binary: a subject, a plain-text part and an
// HTML part.
//
// Each locale is one file, invite/<locale>.tmpl (en, de_AT, …), that
// defines the subject and the phrases of the invite and of its reminder,
// each with and without the shop's name; the shared layouts
// invite/layout.txt and invite/layout.html arrange them, and
// invite/layout.common picks the phrase for the variant at hand. The same locale
// file is parsed by text/template for the text part and by html/template
// for the HTML part, so everything the customer sent (names, product
// names, image URLs) is escaped for the context it lands in. A locale
// file may also define "text" or "html" itself to replace a layout.
package templates

import (
	"bytes"
	"embed"
	"fmt"
	htmltemplate "html/template"
	"io/fs"
	"net/url"
	"path"
	"strings"
	texttemplate "text/template"
	"unicode"

	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/locale"
)

//go:embed invite
var files embed.FS

// DefaultLocale is the last fallback and must exist.
const DefaultLocale = locale.Default

// Product is one product shown in an invite.
type Product struct {
	Name     string
	ImageURL string
	URL      string
}

// Data is what an invite is rendered from.
type Data struct {
	FirstName   string // "" gets a polite greeting without a name
	Products    []Product
	FeedbackURL string
	// Brand names the shop in the subject, the greeting and the footer,
	// shows its logo (https only) and colours the button where the
	// colour stays readable (brand.Palette). Without a display name the
	// invite reads as before, naming no shop.
	Brand brand.Brand
	// UnsubscribeURL, when set, is offered in the footer of both parts.
	UnsubscribeURL string
	// Reminder renders the reminder: its own subject and first lines,
	// the same feedback link.
	Reminder bool
}

// Message is a rendered invite.
type Message struct {
	Locale  string // the template's locale, e.g. "de"
	Subject string
	Text    string
	HTML    string
}

// Set holds the parsed templates of every locale.
type Set struct {
	text map[string]*texttemplate.Template
	html map[string]*htmltemplate.Template
}

// view is Data as the templates see it.
type view struct {
	Data
	Lang    string        // BCP 47 language tag for <html lang>
	Shop    string        // the shop's display name, trimmed; "" for none
	LogoURL string        // the logo when it is an https URL, else ""
	Palette brand.Palette // where the shop's colour may go
}

// New parses the embedded templates.
func New() (*Set, error) {
	textLayout, err := files.ReadFile("invite/layout.txt")
	if err != nil {
		return nil, err
	}
	htmlLayout, err := files.ReadFile("invite/layout.html")
	if err != nil {
		return nil, err
	}
	common, err := files.ReadFile("invite/layout.common")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(files, "invite/*.tmpl")
	if err != nil {
		return nil, err
	}
	s := &Set{text: map[string]*texttemplate.Template{}, html: map[string]*htmltemplate.Template{}}
	for _, name := range names {
		locale := strings.TrimSuffix(path.Base(name), ".tmpl")
		// A regional locale (de_AT) is parsed over its language (de), so
		// it need only define what differs.
		sources := []string{name}
		if lang, _, regional := strings.Cut(locale, "_"); regional {
			sources = []string{"invite/" + lang + ".tmpl", name}
		}
		t, err := texttemplate.New(locale).Option("missingkey=error").Parse(string(textLayout))
		if err == nil {
			_, err = t.Parse(string(common))
		}
		if err != nil {
			return nil, err
		}
		h, err := htmltemplate.New(locale).Option("missingkey=error").Parse(string(htmlLayout))
		if err == nil {
			_, err = h.Parse(string(common))
		}
		if err != nil {
			return nil, err
		}
		for _, src := range sources {
			body, err := files.ReadFile(src)
			if err == nil {
				_, err = t.Parse(string(body))
			}
			if err == nil {
				_, err = h.Parse(string(body))
			}
			if err != nil {
				return nil, fmt.Errorf("template %s: %w", src, err)
			}
		}
		s.text[locale], s.html[locale] = t, h
	}
	if s.text[DefaultLocale] == nil {
		return nil, fs.ErrNotExist
	}
	return s, nil
}

// Locales lists the built-in locales, sorted.
func (s *Set) Locales() []string { return locale.Names(s.text) }

// Pick chooses the template for a defaultLocale: the exact locale
// ("de_AT", also written "de-at"), else its language ("de"), else English.
func (s *Set) Pick(requested string) string {
	return locale.Pick(requested, func(l string) bool { return s.text[l] != nil })
}

// Render renders the invite, or with d.Reminder its reminder, in the
// locale Pick chooses.
func (s *Set) Render(locale string, d Data) (Message, error) {
	locale = s.Pick(locale)
	v := view{
		Data:    d,
		Lang:    strings.ReplaceAll(locale, "_", "-"),
		Shop:    oneLine(d.Brand.DisplayName),
		Palette: d.Brand.Palette(),
	}
	if u, err := url.Parse(d.Brand.LogoURL); err == nil && u.Scheme == "https" && u.Host != "" {
		v.LogoURL = d.Brand.LogoURL
	}
	var subject, text, html bytes.Buffer
	if err := s.text[locale].ExecuteTemplate(&subject, "the-subject", v); err != nil {
		return Message{}, err
	}
	if err := s.text[locale].ExecuteTemplate(&text, "text", v); err != nil {
		return Message{}, err
	}
	if err := s.html[locale].ExecuteTemplate(&html, "html", v); err != nil {
		return Message{}, err
	}
	return Message{Locale: locale, Subject: oneLine(subject.String()), Text: text.String(), HTML: html.String()}, nil
}

// oneLine makes a header value: control characters (a CR/LF smuggled in
// through a name) become spaces, runs of spaces one. Other white space,
// such as the no-break space French puts before "?", is kept.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' }), " ")
}
