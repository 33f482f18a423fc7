// Package templates owns what a customer reads in an invite or a
// reminder, by email and by SMS: the built-in per-locale texts embedded
// in the binary, the templates a shop writes in their place (Validate,
// the closed set of placeholders, the greeting rule for a customer
// without a first name, Choose between an event type's, the account's
// and the built-in template), and the one layout that renders either.
//
// Each locale is one file, invite/<locale>.tmpl (en, de_AT, …), that
// defines the phrases of the built-in invite and reminder and of the
// layout's footer. The built-in template of a locale is made of those
// phrases with placeholders in the value's place (Set.Builtin), so a
// built-in and a shop's template take the same way through the layout:
// the placeholders are filled in as plain text, and the layout's text
// part (text/template) and HTML part (html/template) escape everything
// for the context it lands in. The layout, invite/layout.txt and
// invite/layout.html, belongs to Touchpoint: logo, colour, products,
// button, footer and unsubscribe link are there whatever a template
// says. Its HTML is fluid — 100% wide up to 560 px — so it reads on a
// 360 px phone as on a desktop.
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
	// OrderReference and EventType are the values of {{orderReference}}
	// and {{eventType}}.
	OrderReference, EventType string
	// Template is the shop's template to render (validated); nil renders
	// the built-in one.
	Template *Content
}

// values are the placeholders' values for d, trimmed.
func (d Data) values() Values {
	v := Values{FirstName: d.FirstName, ShopName: d.Brand.DisplayName, OrderReference: d.OrderReference, EventType: d.EventType}
	if len(d.Products) > 0 {
		v.ProductName = d.Products[0].Name
	}
	return v.trimmed()
}

// Message is a rendered invite.
type Message struct {
	Locale  string // the template's locale, e.g. "de"
	Subject string
	Text    string
	HTML    string
	// Builtin: rendered from the built-in template, because Data had
	// none or because its template needs a product the event lacks
	// (Fallback then says so).
	Builtin  bool
	Fallback error
}

// Set holds the parsed templates of every locale.
type Set struct {
	text map[string]*texttemplate.Template
	html map[string]*htmltemplate.Template
}

// view is what the layouts see: the template's fields with their
// placeholders filled in, and the layout's own parts.
type view struct {
	Lang        string // BCP 47 language tag for <html lang>
	Subject     string
	Preheader   string
	Heading     string
	Paragraphs  [][]string // the body: paragraphs of lines
	ButtonLabel string
	Products    []Product
	FeedbackURL string
	// UnsubscribeURL, when set, is offered in the footer.
	UnsubscribeURL string
	Shop           string        // the shop's display name, one line; "" for none
	LogoURL        string        // the logo when it is an https URL, else ""
	Palette        brand.Palette // where the shop's colour may go
	// MSOOpen and MSOClose hold the content at 560 px in Outlook for
	// Windows, which ignores max-width: conditional comments that
	// html/template would strip from the layout itself.
	MSOOpen, MSOClose htmltemplate.HTML
}

const (
	msoOpen  = `<!--[if mso]><table role="presentation" width="560" cellpadding="0" cellspacing="0" align="center"><tr><td><![endif]-->`
	msoClose = `<!--[if mso]></td></tr></table><![endif]-->`
)

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

// phrase executes one of a locale's phrases with data.
func (s *Set) phrase(locale, name string, data any) (string, error) {
	var b bytes.Buffer
	if err := s.text[locale].ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("template %s: %w", locale, err)
	}
	return b.String(), nil
}

// Builtin is the built-in email template of the kind (invite or reminder)
// in the locale Pick chooses for locale, written as a shop would write
// it: the phrases of the locale file with placeholders in place of the
// values. The greeting is the heading, the introduction and the closing
// line are the body.
func (s *Set) Builtin(locale string, reminder bool) (Content, error) {
	return s.builtin(s.Pick(locale), reminder, true)
}

// builtin is Builtin for a picked locale; without a shop it uses the
// phrases that name none.
func (s *Set) builtin(locale string, reminder, shop bool) (Content, error) {
	subject, intro := "subject", "intro"
	if reminder {
		subject, intro = "reminder-subject", "reminder-intro"
	}
	if shop {
		subject, intro = subject+"-shop", intro+"-shop"
	}
	var c Content
	var err error
	get := func(dst *string, name string, data any) {
		if err == nil {
			*dst, err = s.phrase(locale, name, data)
		}
	}
	var closing string
	get(&c.Subject, subject, "{{"+ShopName+"}}")
	get(&c.Heading, "greeting", "{{"+FirstName+"}}")
	get(&c.Body, intro, "{{"+ShopName+"}}")
	get(&closing, "closing", nil)
	get(&c.ButtonLabel, "cta", nil)
	c.Body += "\n\n" + closing
	return c, err
}

// Render renders the invite, or with d.Reminder its reminder, in the
// locale Pick chooses: from d.Template when there is one, else from the
// built-in template. A template that names the product is not used for
// an event without products (ErrNeedsProduct in Message.Fallback).
func (s *Set) Render(locale string, d Data) (Message, error) {
	locale = s.Pick(locale)
	vals := d.values()
	shop := vals.ShopName != ""
	msg := Message{Locale: locale}
	var c Content
	switch {
	case d.Template == nil:
		msg.Builtin = true
	case vals.ProductName == "" && usesProduct(*d.Template):
		msg.Builtin, msg.Fallback = true, ErrNeedsProduct
	default:
		c = *d.Template
	}
	if msg.Builtin {
		var err error
		if c, err = s.builtin(locale, d.Reminder, shop); err != nil {
			return Message{}, err
		}
	}
	neutral, err := s.phrase(locale, "greeting-anonymous", nil)
	if err != nil {
		return Message{}, err
	}
	line := func(text string) string { return expand(text, vals, neutral) }
	v := view{
		Lang:           strings.ReplaceAll(locale, "_", "-"),
		Subject:        line(c.Subject),
		Preheader:      line(c.Preheader),
		Heading:        line(c.Heading),
		Paragraphs:     paragraphs(expand(c.Body, vals, neutral)),
		ButtonLabel:    line(c.ButtonLabel),
		Products:       d.Products,
		FeedbackURL:    d.FeedbackURL,
		UnsubscribeURL: d.UnsubscribeURL,
		Shop:           vals.ShopName,
		Palette:        d.Brand.Palette(),
		MSOOpen:        msoOpen,
		MSOClose:       msoClose,
	}
	if u, err := url.Parse(d.Brand.LogoURL); err == nil && u.Scheme == "https" && u.Host != "" {
		v.LogoURL = d.Brand.LogoURL
	}
	var text, html bytes.Buffer
	if err := s.text[locale].ExecuteTemplate(&text, "text", v); err != nil {
		return Message{}, err
	}
	if err := s.html[locale].ExecuteTemplate(&html, "html", v); err != nil {
		return Message{}, err
	}
	msg.Subject, msg.Text, msg.HTML = v.Subject, text.String(), html.String()
	return msg, nil
}

// usesProduct reports whether any field of c names {{productName}}.
func usesProduct(c Content) bool {
	for _, f := range []string{c.Subject, c.Preheader, c.Heading, c.Body, c.ButtonLabel, c.Text} {
		if uses(f, ProductName) {
			return true
		}
	}
	return false
}
