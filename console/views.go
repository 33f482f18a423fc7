package console

import (
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/touchpoint/touchpoint/console/view"
)

// page is what the layout sees.
type page struct {
	Lang    string // BCP 47, for <html lang>
	Title   string // in the page's language
	Nav     string // the section the page belongs to
	Person  Person
	Signed  bool   // a person is signed in (not so on some error pages)
	P       string // the console's path, "/console", for links
	SignOut string // where the sign-out button posts; "" for none
	Notice  string // what the form before did, in the page's language
	CSS     view.Asset
	JS      view.Asset
	View    any
	texts   map[string]string
}

// T is the text of key in the page's language with the given name/value
// pairs filled in ("{n}" → 3).
func (d page) T(key string, pairs ...any) (string, error) {
	s, ok := d.texts[key]
	if !ok {
		return "", fmt.Errorf("text %q: no such key", key)
	}
	if len(pairs)%2 != 0 {
		return "", fmt.Errorf("text %q: odd number of name/value arguments", key)
	}
	if len(pairs) == 0 {
		return s, nil
	}
	r := make([]string, 0, len(pairs))
	for i := 0; i < len(pairs); i += 2 {
		r = append(r, "{"+fmt.Sprint(pairs[i])+"}", fmt.Sprint(pairs[i+1]))
	}
	return strings.NewReplacer(r...).Replace(s), nil
}

// Has reports whether the page's language has a text for key (for
// values whose text may not exist, such as a reason the code does not
// know yet).
func (d page) Has(key string) bool { _, ok := d.texts[key]; return ok }

// funcs are the helpers of the templates that speak the console's own
// types; package view has the others.
var funcs = template.FuncMap{
	"barHeight": func() int { return barHeight },
	"errs":      func(field, text string) fieldErrors { return fieldErrors{{Field: field, Text: text}} },
}

// render writes a page in the layout (view.Render: a template error
// never sends half a page).
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name, titleKey, nav string, view any) {
	p, signed := personFrom(r.Context())
	lang := h.views.Language(p.Language, r)
	d := page{Lang: strings.ReplaceAll(lang, "_", "-"), Nav: nav, Person: p, Signed: signed, P: strings.TrimSuffix(Prefix, "/"),
		SignOut: h.opts.SignOutPath, CSS: h.views.CSS, JS: h.views.JS, View: view, texts: h.views.Texts[lang]}
	d.Title, _ = d.T(titleKey)
	if done := r.URL.Query().Get("done"); done != "" && d.Has("done_"+done) {
		d.Notice, _ = d.T("done_" + done)
	}
	if err := h.views.Render(w, status, name, d); err != nil {
		if h.opts.Report != nil {
			h.opts.Report(r, err)
		}
		h.log.ErrorContext(r.Context(), "console page", "page", name, "error", err.Error())
	}
}

// renderPart writes one template of a page on its own (a piece a script
// puts in place), with the page's texts.
func (h *Handler) renderPart(w http.ResponseWriter, r *http.Request, name, part string, view any) {
	p, signed := personFrom(r.Context())
	lang := h.views.Language(p.Language, r)
	d := page{Lang: strings.ReplaceAll(lang, "_", "-"), Person: p, Signed: signed, P: strings.TrimSuffix(Prefix, "/"),
		View: view, texts: h.views.Texts[lang]}
	if err := h.views.RenderPart(w, name, part, map[string]any{"View": view, "T": d}); err != nil {
		h.fail(w, r, err)
	}
}

// errorView is the view of the error page.
type errorView struct{ Key string }

func (h *Handler) errorPage(w http.ResponseWriter, r *http.Request, status int, key string) {
	h.render(w, r, status, "error", key+"_title", "", errorView{Key: key})
}
