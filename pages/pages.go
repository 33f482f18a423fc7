// Package pages renders the public HTML pages a customer sees: the
// feedback form behind the invite's link, its thank-you page, the
// unsubscribe confirmation and its done page, and the short 404 and 400
// pages that reveal nothing.
//
// The pages are server-rendered with html/template from files embedded
// in the binary and parsed once by New. They need no JavaScript and load
// nothing from elsewhere but the shop's https images: the CSS is inline
// and allowed by its sha256 in a strict Content-Security-Policy (the
// pattern of Pinniped's formposthtml). Every page carries the same
// security headers (headers.go). Texts come from one table per locale,
// locales/<locale>.json, chosen like the invite emails' locale.
//
// Handler serves them (handler.go): it checks the signed links, reads
// and writes through a small Store interface, and is mounted by the API
// on the routes of its route table.
package pages

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/touchpoint/touchpoint/brand"
)

//go:embed html/*.html
var htmlFiles embed.FS

// css is the style sheet of every page, served inline.
//
//go:embed pages.css
var css string

// Product is one product of the order, shown on the feedback page.
type Product struct {
	Name     string
	ImageURL string // shown only when it is an https URL
	// Index is the product's place in the event's products: its fields
	// are ProductRatingField(Index) and ProductCommentField(Index).
	Index int
	// Rating (1–5, 0 for none) and Comment are the reader's answer so
	// far.
	Rating  int
	Comment string
}

// FeedbackView is the feedback form: first empty, then again with the
// reader's answers and the problems found in them.
type FeedbackView struct {
	Locale   string      // the event's locale, e.g. "de_AT"
	Brand    brand.Brand // the shop
	Products []Product
	Action   string // the form's action, e.g. "/feedback"
	EventID  string // hidden field "event"
	Sig      string // hidden field "sig"
	Rating   int    // 1–5 keeps a choice; 0 for none
	Comment  string
	ShowName bool         // the checkbox "show my name" is ticked
	Errors   []FieldError // from ParseFeedback; the page is then titled as an error
}

// ThanksView is the page after a review was stored.
type ThanksView struct {
	Locale  string
	Brand   brand.Brand
	Rating  int    // the rating just given, shown back; 0 to leave out
	EditURL string // the feedback page again, to change the answer; "" to leave out
}

// UnsubscribeView is the page asking to confirm an unsubscribe.
type UnsubscribeView struct {
	Locale string
	Brand  brand.Brand
	// Action is where the confirm button posts, with the link's query:
	// "/unsubscribe?event=…&sig=…". The form's body is
	// "List-Unsubscribe=One-Click", the same as a mail client's
	// one-click unsubscribe (RFC 8058), so one handler serves both.
	Action string
	// Address names the address that will be unsubscribed; "" leaves it
	// out. Pass it masked ("j•••@example.com"): whoever holds the link
	// sees it.
	Address string
}

// UnsubscribedView is the page after an unsubscribe.
type UnsubscribedView struct {
	Locale string
	Brand  brand.Brand // its ReplyTo, when set, is offered for a mistaken unsubscribe
}

// The page templates, by name; each defines "title" and "main" for the
// layout.
const (
	pageFeedback     = "feedback"
	pageThanks       = "thanks"
	pageNotFound     = "notfound"
	pageBadRequest   = "badrequest"
	pageUnsubscribe  = "unsubscribe"
	pageUnsubscribed = "unsubscribed"
	pageUnavailable  = "unavailable"
	pageExpired      = "expired"
	pageNotAllowed   = "methodnotallowed"
)

// Pages holds the parsed templates and the texts of every locale.
type Pages struct {
	tmpl  map[string]*template.Template // by page name
	texts map[string]map[string]string  // by locale, then key
	// HSTS: the pages are served on https (the base URL is), so they
	// send Strict-Transport-Security.
	HSTS bool
}

// New parses the embedded templates and locale tables. It fails when a
// locale lacks a key English has or has one English lacks.
func New() (*Pages, error) {
	texts, err := loadTexts()
	if err != nil {
		return nil, err
	}
	funcs := template.FuncMap{
		"https":           isHTTPS,
		"ratings":         func() []int { return []int{1, 2, 3, 4, 5} },
		"ratingID":        ratingID,
		"productRatingID": productRatingID,
	}
	base, err := template.New("layout").Funcs(funcs).Option("missingkey=error").ParseFS(htmlFiles, "html/layout.html")
	if err != nil {
		return nil, fmt.Errorf("parse layout: %w", err)
	}
	p := &Pages{tmpl: map[string]*template.Template{}, texts: texts}
	for _, name := range []string{pageFeedback, pageThanks, pageNotFound, pageBadRequest, pageUnsubscribe, pageUnsubscribed, pageUnavailable, pageExpired, pageNotAllowed} {
		t, err := template.Must(base.Clone()).ParseFS(htmlFiles, "html/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parse %s page: %w", name, err)
		}
		p.tmpl[name] = t
	}
	return p, nil
}

// Feedback writes the feedback form with the given status: 200 for the
// first view, 400 with v.Errors after a bad post.
func (p *Pages) Feedback(w http.ResponseWriter, status int, v FeedbackView) error {
	fv := feedbackPage{FeedbackView: v}
	for _, p := range v.Products {
		fv.ProductFields = append(fv.ProductFields, productPart{Product: p, RatingField: ProductRatingField(p.Index),
			CommentField: ProductCommentField(p.Index), RatingID: fieldID(ProductRatingField(p.Index)),
			CommentID: fieldID(ProductCommentField(p.Index))})
	}
	for _, e := range v.Errors {
		fe := summaryError{Href: "#" + fieldID(e.Field), Code: e.Code}
		switch {
		case e.Field == FieldRating && fv.RatingError == "":
			fv.RatingError = e.Code
		case e.Field == FieldComment && fv.CommentError == "":
			fv.CommentError = e.Code
		}
		for i := range fv.ProductFields {
			pf := &fv.ProductFields[i]
			if pf.Index != e.Product {
				continue
			}
			fe.Product = pf.Name
			switch e.Field {
			case pf.RatingField:
				pf.RatingError = e.Code
			case pf.CommentField:
				pf.CommentError = e.Code
			}
		}
		fv.Summary = append(fv.Summary, fe)
	}
	return p.render(w, status, pageFeedback, v.Locale, v.Brand, fv)
}

// Thanks writes the thank-you page (200) after a review was stored.
func (p *Pages) Thanks(w http.ResponseWriter, v ThanksView) error {
	return p.render(w, http.StatusOK, pageThanks, v.Locale, v.Brand, v)
}

// NotFound writes the 404 page for a link that does not verify or whose
// event is gone. It names no shop and no event: pass only a locale from
// the request itself (AcceptLanguage), never the event's.
func (p *Pages) NotFound(w http.ResponseWriter, locale string) error {
	return p.render(w, http.StatusNotFound, pageNotFound, locale, brand.Brand{}, nil)
}

// BadRequest writes the 400 page for a request that is not a form at all
// (ParseFeedback's errors).
func (p *Pages) BadRequest(w http.ResponseWriter, locale string) error {
	return p.render(w, http.StatusBadRequest, pageBadRequest, locale, brand.Brand{}, nil)
}

// MethodNotAllowed writes the 405 page for a method the page does not
// answer (PUT on the feedback page), with the Allow header listing those
// it does. Like NotFound it names no shop.
func (p *Pages) MethodNotAllowed(w http.ResponseWriter, locale string, allow []string) error {
	w.Header().Set("Allow", strings.Join(allow, ", "))
	return p.render(w, http.StatusMethodNotAllowed, pageNotAllowed, locale, brand.Brand{}, nil)
}

// Unavailable writes the page for an answer that cannot be taken now:
// 429 when the reader's address sent too many requests, 503 when the
// database is unreachable. The caller sets Retry-After.
func (p *Pages) Unavailable(w http.ResponseWriter, status int, locale string) error {
	return p.render(w, status, pageUnavailable, locale, brand.Brand{}, nil)
}

// ExpiredView is the page of a feedback link that verified but is too
// old to use.
type ExpiredView struct {
	Locale string // the event's
	Brand  brand.Brand
}

// Expired writes the 410 page of a feedback link past its lifetime: the
// link is genuine (it verified), so the page may name the shop.
func (p *Pages) Expired(w http.ResponseWriter, v ExpiredView) error {
	return p.render(w, http.StatusGone, pageExpired, v.Locale, v.Brand, v)
}

// Unsubscribe writes the page that asks to confirm an unsubscribe; a GET
// shows it and never unsubscribes.
func (p *Pages) Unsubscribe(w http.ResponseWriter, status int, v UnsubscribeView) error {
	return p.render(w, status, pageUnsubscribe, v.Locale, v.Brand, v)
}

// Unsubscribed writes the page (200) after an unsubscribe.
func (p *Pages) Unsubscribed(w http.ResponseWriter, v UnsubscribedView) error {
	return p.render(w, http.StatusOK, pageUnsubscribed, v.Locale, v.Brand, v)
}

// feedbackPage is FeedbackView with its errors sorted to their fields.
type feedbackPage struct {
	FeedbackView
	RatingError, CommentError string // codes; "" when the field is fine
	ProductFields             []productPart
	Summary                   []summaryError
}

// productPart is a product's part of the form.
type productPart struct {
	Product
	RatingField, CommentField string // the field names
	RatingID, CommentID       string // the ids the error summary links to
	RatingError, CommentError string // codes; "" when the field is fine
}

// summaryError is an entry of the error summary: the field's id, the
// code, and the product's name for a product's field.
type summaryError struct {
	Href, Code, Product string
}

// fieldID is the id of a field's element (the first radio of a rating):
// "product.0.rating" → "product-0-rating".
func fieldID(field string) string { return strings.ReplaceAll(field, ".", "-") }

// productRatingID is the id of a product's rating radio n: the first
// carries the field's id.
func productRatingID(id string, n int) string {
	if n == 1 {
		return id
	}
	return id + "-" + strconv.Itoa(n)
}

// page is what the layout sees.
type page struct {
	Lang     string       // BCP 47, for <html lang>
	Shop     string       // the shop's name, "" on pages that name none
	LogoURL  string       // "" unless an https URL
	CSS      template.CSS // pages.css
	BrandCSS template.CSS // the shop's colours as CSS variables
	View     any
	texts    map[string]string
}

// T is the text of key in the page's locale with {shop} and the given
// name/value pairs filled in. Without a shop name, the key's "_generic"
// variant is used where there is one.
func (d page) T(key string, pairs ...string) (string, error) {
	s, err := d.text(key, len(pairs))
	if err != nil {
		return "", err
	}
	r := []string{"{shop}", d.Shop}
	for i := 0; i+1 < len(pairs); i += 2 {
		r = append(r, "{"+pairs[i]+"}", pairs[i+1])
	}
	return strings.NewReplacer(r...).Replace(s), nil
}

// H is T for HTML: the text is escaped and every inserted value is
// wrapped in <bdi>, so a name in another script direction, or one
// carrying direction overrides, cannot turn the sentence around it.
func (d page) H(key string, pairs ...string) (template.HTML, error) {
	s, err := d.text(key, len(pairs))
	if err != nil {
		return "", err
	}
	iso := func(v string) string { return "<bdi>" + template.HTMLEscapeString(v) + "</bdi>" }
	r := []string{"{shop}", iso(d.Shop)}
	for i := 0; i+1 < len(pairs); i += 2 {
		r = append(r, template.HTMLEscapeString("{"+pairs[i]+"}"), iso(pairs[i+1]))
	}
	return template.HTML(strings.NewReplacer(r...).Replace(template.HTMLEscapeString(s))), nil
}

func (d page) text(key string, npairs int) (string, error) {
	if npairs%2 != 0 {
		return "", fmt.Errorf("text %q: odd number of name/value arguments", key)
	}
	if d.Shop == "" {
		if s, ok := d.texts[key+"_generic"]; ok {
			return s, nil
		}
	}
	s, ok := d.texts[key]
	if !ok {
		return "", fmt.Errorf("text %q: no such key", key)
	}
	return s, nil
}

// render executes a page into a buffer and only then writes the headers
// and the body, so a template error never sends half a page. On an error
// the reader gets a bare 500 page and the caller the error to log.
func (p *Pages) render(w http.ResponseWriter, status int, name, locale string, b brand.Brand, view any) error {
	locale = p.Pick(locale)
	brandCSS := paletteCSS(b.Palette())
	d := page{
		Lang:     strings.ReplaceAll(locale, "_", "-"),
		Shop:     strings.TrimSpace(b.DisplayName),
		CSS:      template.CSS(css),      // our own embedded file
		BrandCSS: template.CSS(brandCSS), // built from parsed colours only
		View:     view,
		texts:    p.texts[locale],
	}
	if isHTTPS(b.LogoURL) {
		d.LogoURL = b.LogoURL
	}
	var buf bytes.Buffer
	if err := p.tmpl[name].ExecuteTemplate(&buf, "layout", d); err != nil {
		setHeaders(w.Header(), csp(), p.HSTS)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, internalError)
		return fmt.Errorf("render %s page: %w", name, err)
	}
	setHeaders(w.Header(), csp(css, brandCSS), p.HSTS)
	w.WriteHeader(status)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write %s page: %w", name, err)
	}
	return nil
}

// internalError is the whole page when a template fails: no styles, no
// texts that could fail in turn.
const internalError = "<!DOCTYPE html>\n<html lang=\"en\"><meta charset=\"utf-8\"><title>Error</title><p>Sorry, something went wrong. Please try again later.</p></html>\n"

// paletteCSS sets the CSS variables that pages.css uses for colours.
// Every value comes from brand.Palette, which only returns "#RRGGBB".
func paletteCSS(p brand.Palette) string {
	return ":root{--accent:" + p.Accent + ";--button:" + p.Button + ";--button-text:" + p.ButtonText +
		";--button-border:" + p.ButtonBorder + ";--strong:" + p.Text + ";--tint:" + p.Tint + "}"
}

// isHTTPS reports whether s is an absolute https URL: the only images the
// Content-Security-Policy lets the page load.
func isHTTPS(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != ""
}

// ratingID is the id of a rating's radio input: the first is "rating",
// the field's id that the error summary links to (the GOV.UK pattern).
func ratingID(n int) string {
	if n == 1 {
		return FieldRating
	}
	return FieldRating + "-" + strconv.Itoa(n)
}
