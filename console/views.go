package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/locale"
	"github.com/touchpoint/touchpoint/sendtime"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed locales/*.json
var localeFiles embed.FS

//go:embed assets/console.css assets/console.js
var assetFiles embed.FS

// The response headers of every console page, in one place.
const (
	headerCSP            = "Content-Security-Policy"
	headerReferrerPolicy = "Referrer-Policy"
	headerCacheControl   = "Cache-Control"
	headerNoSniff        = "X-Content-Type-Options"
	headerHSTS           = "Strict-Transport-Security"

	contentTypeHTML = "text/html; charset=utf-8"
	// A page shows a shop's reviews and its customers' addresses: keep
	// it out of every cache and the browser's history cache.
	noStore = "no-store"
	// Links from the console (a product, the Temporal UI) need not learn
	// which page they were followed from.
	sameOriginReferrer = "same-origin"
	hsts               = "max-age=31536000"

	// cspFormat is the policy of every page: styles from the console's
	// own style sheet, its one script by hash (the %s), images from the
	// console or https (a shop's logo), the template previews framed from
	// the console itself, forms posted to it, and no framing by anyone.
	cspFormat = "default-src 'none'; style-src 'self'; script-src %s; img-src 'self' https: data:; connect-src 'self'; " +
		"frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

// asset is an embedded file served with a name that holds its hash, so it
// can be cached for good.
type asset struct {
	Name      string // e.g. "console-1a2b3c4d5e6f.css"
	Integrity string // "sha256-…", for the script's integrity and the CSP
	body      []byte
	mediaType string
}

func loadAsset(file, mediaType string) (asset, error) {
	b, err := assetFiles.ReadFile("assets/" + file)
	if err != nil {
		return asset{}, err
	}
	sum := sha256.Sum256(b)
	ext := path.Ext(file)
	return asset{Name: strings.TrimSuffix(file, ext) + "-" + hex.EncodeToString(sum[:6]) + ext,
		Integrity: "sha256-" + base64.StdEncoding.EncodeToString(sum[:]), body: b, mediaType: mediaType}, nil
}

// views holds the parsed templates, the texts of every language and the
// assets.
type views struct {
	tmpl    map[string]*template.Template // by page name
	texts   map[string]map[string]string  // by locale, then key
	css, js asset
	csp     string
}

// pageNames are the templates/<name>.html that define "main" for the
// layout.
var pageNames = []string{"error", "signin", "overview", "reviews", "review", "invites", "invite", "suppressions", "templates", "template", "webhooks", "webhook", "settings"}

func loadViews() (*views, error) {
	texts, err := loadTexts()
	if err != nil {
		return nil, err
	}
	v := &views{tmpl: map[string]*template.Template{}, texts: texts}
	if v.css, err = loadAsset("console.css", "text/css; charset=utf-8"); err != nil {
		return nil, err
	}
	if v.js, err = loadAsset("console.js", "text/javascript; charset=utf-8"); err != nil {
		return nil, err
	}
	v.csp = fmt.Sprintf(cspFormat, "'"+v.js.Integrity+"'")
	base, err := template.New("layout").Funcs(funcs).Option("missingkey=error").ParseFS(templateFiles, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("parse the console's layout: %w", err)
	}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(templateFiles, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parse the console's %s page: %w", name, err)
		}
		v.tmpl[name] = t
	}
	return v, nil
}

// Languages lists the languages the console is written in ("da", "de",
// "en", …), sorted.
func Languages() []string {
	files, _ := fs.Glob(localeFiles, "locales/*.json") // the pattern is valid
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = strings.TrimSuffix(path.Base(f), ".json")
	}
	return out
}

// loadTexts reads locales/*.json, every language with exactly the keys
// of English.
func loadTexts() (map[string]map[string]string, error) {
	return locale.Tables(localeFiles, "locales/*.json")
}

// language is the language a person reads the console in: their choice,
// else their browser's (the one Accept-Language rule), else English.
func (v *views) language(p Person, r *http.Request) string {
	has := func(l string) bool { return v.texts[l] != nil }
	if p.Language != "" {
		return locale.Pick(p.Language, has)
	}
	return locale.FromAcceptLanguage(r.Header.Get("Accept-Language"), has)
}

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
	CSS     asset
	JS      asset
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

// funcs are the helpers every template may call.
var funcs = template.FuncMap{
	// when shows an instant as a <time> element, in UTC.
	"when": func(t any) template.HTML {
		var tt time.Time
		switch v := t.(type) {
		case time.Time:
			tt = v
		case *time.Time:
			if v == nil {
				return ""
			}
			tt = *v
		default:
			return ""
		}
		if tt.IsZero() {
			return ""
		}
		u := tt.UTC()
		return template.HTML(`<time datetime="` + u.Format(time.RFC3339) + `">` + u.Format("2006-01-02 15:04") + ` UTC</time>`)
	},
	"day": func(t time.Time) string { return t.UTC().Format("2006-01-02") },
	"seq": func(from, to int) []int {
		var out []int
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	},
	"add": func(a, b int) int { return a + b },
	"pct": func(n, of int64) string {
		if of <= 0 {
			return "–"
		}
		return strconv.FormatFloat(float64(n)*100/float64(of), 'f', 1, 64) + " %"
	},
	"dict": func(pairs ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(pairs); i += 2 {
			m[fmt.Sprint(pairs[i])] = pairs[i+1]
		}
		return m
	},
	"str": func(v any) string { return fmt.Sprint(v) },
	"deref": func(n *int) int {
		if n == nil {
			return 0
		}
		return *n
	},
	"nav": func() []navItem { return navItems },
	// excerpt is the start of a long text, cut at a word.
	"excerpt": func(s string, n int) string {
		r := []rune(s)
		if len(r) <= n {
			return s
		}
		cut := string(r[:n])
		if i := strings.LastIndexAny(cut, " \n"); i > n/2 {
			cut = cut[:i]
		}
		return strings.TrimRight(cut, " ,.;:\n") + "…"
	},
	"barHeight": func() int { return barHeight },
	"list":      func(v ...string) []string { return v },
	"has":       func(vs []string, v string) bool { return slices.Contains(vs, v) },
	"windowPart": func(w *sendtime.SendWindow, part string) string {
		if w == nil {
			return ""
		}
		return map[string]string{"start": w.Start, "end": w.End, "timeZone": w.TimeZone}[part]
	},
	"errs": func(field, text string) fieldErrors { return fieldErrors{{Field: field, Text: text}} },
}

// navItem is a section of the console in the bar at the top.
type navItem struct{ Key, Path string }

var navItems = []navItem{{"overview", "/"}, {"reviews", "/reviews"}, {"invites", "/invites"}, {"templates", "/templates"},
	{"webhooks", "/webhooks"}, {"suppressions", "/suppressions"}, {"settings", "/settings"}}

// render writes a page in the layout: executed into a buffer first, so
// a template error never sends half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name, titleKey, nav string, view any) {
	p, signed := personFrom(r.Context())
	lang := h.views.language(p, r)
	d := page{Lang: strings.ReplaceAll(lang, "_", "-"), Nav: nav, Person: p, Signed: signed, P: strings.TrimSuffix(Prefix, "/"),
		SignOut: h.opts.SignOutPath, CSS: h.views.css, JS: h.views.js, View: view, texts: h.views.texts[lang]}
	d.Title, _ = d.T(titleKey)
	if done := r.URL.Query().Get("done"); done != "" && d.Has("done_"+done) {
		d.Notice, _ = d.T("done_" + done)
	}
	var buf bytes.Buffer
	if err := h.views.tmpl[name].ExecuteTemplate(&buf, "layout", d); err != nil {
		h.setHeaders(w.Header())
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, internalError)
		if h.opts.Report != nil {
			h.opts.Report(r, err)
		}
		h.log.ErrorContext(r.Context(), "console page", "page", name, "error", err.Error())
		return
	}
	h.setHeaders(w.Header())
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderPart writes one template of a page on its own (a piece a script
// puts in place), with the page's texts.
func (h *Handler) renderPart(w http.ResponseWriter, r *http.Request, name, part string, view any) {
	p, signed := personFrom(r.Context())
	lang := h.views.language(p, r)
	d := page{Lang: strings.ReplaceAll(lang, "_", "-"), Person: p, Signed: signed, P: strings.TrimSuffix(Prefix, "/"),
		View: view, texts: h.views.texts[lang]}
	var buf bytes.Buffer
	if err := h.views.tmpl[name].ExecuteTemplate(&buf, part, map[string]any{"View": view, "T": d}); err != nil {
		h.fail(w, r, err)
		return
	}
	h.setHeaders(w.Header())
	_, _ = w.Write(buf.Bytes())
}

// internalError is the whole page when a template fails.
const internalError = "<!DOCTYPE html>\n<html lang=\"en\"><meta charset=\"utf-8\"><title>Error</title><p>Sorry, something went wrong. Please try again later.</p></html>\n"

func (h *Handler) setHeaders(hd http.Header) {
	if h.opts.HSTS {
		hd.Set(headerHSTS, hsts)
	}
	hd.Set("Content-Type", contentTypeHTML)
	hd.Set(headerCSP, h.views.csp)
	hd.Set(headerNoSniff, "nosniff")
	hd.Set(headerReferrerPolicy, sameOriginReferrer)
	hd.Set(headerCacheControl, noStore)
}

// errorView is the view of the error page.
type errorView struct{ Key string }

func (h *Handler) errorPage(w http.ResponseWriter, r *http.Request, status int, key string) {
	h.render(w, r, status, "error", key+"_title", "", errorView{Key: key})
}

// asset serves the style sheet and the script under their hashed names,
// for good: a new build has new names.
func (h *Handler) asset(w http.ResponseWriter, r *http.Request) {
	var a asset
	switch r.PathValue("name") {
	case h.views.css.Name:
		a = h.views.css
	case h.views.js.Name:
		a = h.views.js
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.mediaType)
	w.Header().Set(headerNoSniff, "nosniff")
	w.Header().Set(headerCacheControl, "public, max-age=31536000, immutable")
	_, _ = w.Write(a.body)
}
