// Package htmlpage renders the small server-rendered pages of the built-in
// issuer: the sign-in pages that a shop's people read before the console
// (whose own pages, with their script, live in console/view). One layout and one stylesheet, embedded and
// hashed into a strict Content-Security-Policy (no script at all, no
// framing); the strings of each page per locale, from JSON tables that
// must all have the same keys; and the response headers, named once.
// A page is rendered into a buffer first, so a template error never sends
// half a page.
package htmlpage

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"strings"

	"github.com/touchpoint/touchpoint/locale"
)

//go:embed layout.html style.css
var files embed.FS

// Texts are the strings of a set of pages, by locale and key.
type Texts map[string]map[string]string

// LoadTexts reads the tables of texts of fsys matching pattern, one per
// locale (locale.Tables).
func LoadTexts(fsys fs.FS, pattern string) (Texts, error) {
	t, err := locale.Tables(fsys, pattern)
	return Texts(t), err
}

func (t Texts) has(l string) bool { return t[l] != nil }

// Locales lists the locales, sorted.
func (t Texts) Locales() []string { return locale.Names(t) }

// Pick is the locale for a requested one, by locale.Pick.
func (t Texts) Pick(requested string) string { return locale.Pick(requested, t.has) }

// FromAcceptLanguage is the locale for a browser's Accept-Language.
func (t Texts) FromAcceptLanguage(header string) string {
	return locale.FromAcceptLanguage(header, t.has)
}

// Text is the string of key in locale l with {name} placeholders filled
// in from the name/value pairs, for plain text (a mail's text part, a
// subject).
func (t Texts) Text(l, key string, pairs ...string) (string, error) {
	return fill(t[t.Pick(l)], key, pairs, func(s string) string { return s }, func(v string) string { return v })
}

// fill is the text of key with each {name} of the name/value pairs
// replaced; the text goes through text, each value through value.
func fill(texts map[string]string, key string, pairs []string, text, value func(string) string) (string, error) {
	s, ok := texts[key]
	if !ok {
		return "", fmt.Errorf("text %q: no such key", key)
	}
	if len(pairs)%2 != 0 {
		return "", fmt.Errorf("text %q: odd number of name/value arguments", key)
	}
	r := make([]string, 0, len(pairs))
	for i := 0; i+1 < len(pairs); i += 2 {
		r = append(r, text("{"+pairs[i]+"}"), value(pairs[i+1]))
	}
	return strings.NewReplacer(r...).Replace(text(s)), nil
}

// The response headers of every page.
const (
	headerCSP            = "Content-Security-Policy"
	headerContentType    = "Content-Type"
	headerNoSniff        = "X-Content-Type-Options"
	headerFrameOptions   = "X-Frame-Options"
	headerReferrerPolicy = "Referrer-Policy"
	headerCacheControl   = "Cache-Control"
	headerHSTS           = "Strict-Transport-Security"

	contentTypeHTML = "text/html; charset=utf-8"
	noSniff         = "nosniff"
	// Never framed: a page that signs someone in or changes an account
	// must not be laid under another site's clicks. frame-ancestors says
	// so to every browser that reads the policy, X-Frame-Options to the
	// rest.
	denyFraming = "DENY"
	// Addresses carry sign-in tokens: never send them to another site.
	// Not no-referrer: a browser then sends "Origin: null" with a form's
	// post, and the issuer could not tell its own forms from a forgery.
	sameOriginReferrer = "same-origin"
	// Pages show a person's account: keep them out of every cache.
	noStore = "no-store"
	hsts    = "max-age=31536000"

	// cspFormat allows nothing but the stylesheet whose hash fills the
	// first %s, images of the page's own origin, and forms posted to the
	// page's own origin or leading (by a redirect after the post) to the
	// origins of the second %s. No script at all.
	cspFormat = "default-src 'none'; style-src %s; img-src 'self'; form-action 'self'%s; frame-ancestors 'none'; base-uri 'none'"
)

// Options make a Site.
type Options struct {
	// Pages holds a template per page, "<name>.html", each defining
	// "title" and "main".
	Pages fs.FS
	Names []string
	Texts Texts
	Funcs template.FuncMap
	// FormAction are the origins a form's post may redirect to besides
	// the page's own (the relying parties the issuer answers).
	FormAction []string
	// HSTS sends Strict-Transport-Security: the pages are on https.
	HSTS bool
}

// Site renders a set of pages.
type Site struct {
	tmpl  map[string]*template.Template
	texts Texts
	css   string
	csp   string
	hsts  bool
}

// New parses the layout and the pages.
func New(o Options) (*Site, error) {
	css, err := files.ReadFile("style.css")
	if err != nil {
		return nil, err
	}
	base, err := template.New("layout").Funcs(o.Funcs).Option("missingkey=error").ParseFS(files, "layout.html")
	if err != nil {
		return nil, fmt.Errorf("parse layout: %w", err)
	}
	s := &Site{tmpl: map[string]*template.Template{}, texts: o.Texts, css: string(css), hsts: o.HSTS}
	var extra string
	for _, origin := range o.FormAction {
		extra += " " + origin
	}
	s.csp = fmt.Sprintf(cspFormat, cspHash(s.css), extra)
	for _, name := range o.Names {
		t, err := template.Must(base.Clone()).ParseFS(o.Pages, name+".html")
		if err != nil {
			return nil, fmt.Errorf("parse %s page: %w", name, err)
		}
		s.tmpl[name] = t
	}
	return s, nil
}

// Texts are the site's strings.
func (s *Site) Texts() Texts { return s.texts }

// CSP is the Content-Security-Policy every page is sent with.
func (s *Site) CSP() string { return s.csp }

// cspHash is the CSP source expression allowing an inline style element
// whose text is exactly css.
func cspHash(css string) string {
	sum := sha256.Sum256([]byte(css))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// SetHeaders sets the headers every page carries; the handlers that
// answer without a page (a redirect) set them too.
func (s *Site) SetHeaders(h http.Header) {
	if s.hsts {
		h.Set(headerHSTS, hsts)
	}
	h.Set(headerContentType, contentTypeHTML)
	h.Set(headerCSP, s.csp)
	h.Set(headerNoSniff, noSniff)
	h.Set(headerFrameOptions, denyFraming)
	h.Set(headerReferrerPolicy, sameOriginReferrer)
	h.Set(headerCacheControl, noStore)
}

// Page is what a page's template sees.
type Page struct {
	Lang string       // BCP 47, for <html lang>
	CSS  template.CSS // the stylesheet
	View any
	// locale picked and its texts
	texts map[string]string
}

// T is the text of key with the given name/value pairs filled in.
func (p Page) T(key string, pairs ...string) (string, error) {
	return fill(p.texts, key, pairs, func(s string) string { return s }, func(v string) string { return v })
}

// H is T for HTML: the text escaped, and every inserted value wrapped in
// <bdi>, so an address in another script direction, or carrying
// direction overrides, cannot turn the sentence around it.
func (p Page) H(key string, pairs ...string) (template.HTML, error) {
	s, err := fill(p.texts, key, pairs, template.HTMLEscapeString,
		func(v string) string { return "<bdi>" + template.HTMLEscapeString(v) + "</bdi>" })
	return template.HTML(s), err
}

// Render writes page name in locale with status. On a template error the
// reader gets a bare 500 page and the caller the error to log.
func (s *Site) Render(w http.ResponseWriter, status int, name, l string, view any) error {
	l = s.texts.Pick(l)
	p := Page{Lang: strings.ReplaceAll(l, "_", "-"), CSS: template.CSS(s.css), View: view, texts: s.texts[l]}
	t, ok := s.tmpl[name]
	var buf bytes.Buffer
	var err error
	if !ok {
		err = fmt.Errorf("no page %q", name)
	} else {
		err = t.ExecuteTemplate(&buf, "layout", p)
	}
	s.SetHeaders(w.Header())
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, internalError)
		return fmt.Errorf("render %s page: %w", name, err)
	}
	w.WriteHeader(status)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write %s page: %w", name, err)
	}
	return nil
}

// internalError is the whole page when a template fails: no styles, no
// texts that could fail in turn.
const internalError = "<!DOCTYPE html>\n<html lang=\"en\"><meta charset=\"utf-8\"><title>Error</title><p>Sorry, something went wrong. Please try again later.</p></html>\n"
