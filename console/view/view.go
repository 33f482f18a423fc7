// Package view is how the console looks: its pages' templates in one
// layout, its texts in every language, its style sheet and script, and
// the headers every page is sent with, all embedded in the binary and
// parsed once at start (Load). The console's handlers decide what a page
// shows; this package renders it, into a buffer first.
package view

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
	HeaderCSP            = "Content-Security-Policy"
	HeaderReferrerPolicy = "Referrer-Policy"
	HeaderCacheControl   = "Cache-Control"
	HeaderNoSniff        = "X-Content-Type-Options"
	headerHSTS           = "Strict-Transport-Security"

	ContentTypeHTML = "text/html; charset=utf-8"
	// NoStore: a page shows a shop's reviews and its customers'
	// addresses: keep it out of every cache and the browser's history
	// cache.
	NoStore = "no-store"
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

// Asset is an embedded file served with a name that holds its hash, so it
// can be cached for good.
type Asset struct {
	Name      string // e.g. "console-1a2b3c4d5e6f.css"
	Integrity string // "sha256-…", for the script's integrity and the CSP
	body      []byte
	mediaType string
}

func loadAsset(file, mediaType string) (Asset, error) {
	b, err := assetFiles.ReadFile("assets/" + file)
	if err != nil {
		return Asset{}, err
	}
	sum := sha256.Sum256(b)
	ext := path.Ext(file)
	return Asset{Name: strings.TrimSuffix(file, ext) + "-" + hex.EncodeToString(sum[:6]) + ext,
		Integrity: "sha256-" + base64.StdEncoding.EncodeToString(sum[:]), body: b, mediaType: mediaType}, nil
}

// Views holds the parsed templates, the texts of every language and the
// assets.
type Views struct {
	tmpl    map[string]*template.Template // by page name
	Texts   map[string]map[string]string  // by locale, then key
	CSS, JS Asset
	csp     string
	hsts    bool // the console is served over https
}

// pageNames are the templates/<name>.html that define "main" for the
// layout.
var pageNames = []string{"error", "signin", "overview", "reviews", "review", "invites", "invite", "suppressions", "templates", "template", "webhooks", "webhook", "settings"}

// Load parses the templates of every page, with the helpers of funcs
// beside this package's own (those that speak the console's types), and
// reads the texts and the assets. hsts: the console is served over https.
func Load(funcs template.FuncMap, hsts bool) (*Views, error) {
	texts, err := loadTexts()
	if err != nil {
		return nil, err
	}
	v := &Views{tmpl: map[string]*template.Template{}, Texts: texts, hsts: hsts}
	if v.CSS, err = loadAsset("console.css", "text/css; charset=utf-8"); err != nil {
		return nil, err
	}
	if v.JS, err = loadAsset("console.js", "text/javascript; charset=utf-8"); err != nil {
		return nil, err
	}
	v.csp = fmt.Sprintf(cspFormat, "'"+v.JS.Integrity+"'")
	base, err := template.New("layout").Funcs(baseFuncs).Funcs(funcs).Option("missingkey=error").ParseFS(templateFiles, "templates/layout.html")
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

// Language is the language a person reads the console in: their choice
// (chosen), else their browser's (the one Accept-Language rule), else
// English.
func (v *Views) Language(chosen string, r *http.Request) string {
	has := func(l string) bool { return v.Texts[l] != nil }
	if chosen != "" {
		return locale.Pick(chosen, has)
	}
	return locale.FromAcceptLanguage(r.Header.Get("Accept-Language"), has)
}

// baseFuncs are the helpers every template may call, besides those the
// console adds (Load).
var baseFuncs = template.FuncMap{
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
	"list": func(v ...string) []string { return v },
	"has":  func(vs []string, v string) bool { return slices.Contains(vs, v) },
	"windowPart": func(w *sendtime.SendWindow, part string) string {
		if w == nil {
			return ""
		}
		return map[string]string{"start": w.Start, "end": w.End, "timeZone": w.TimeZone}[part]
	},
}

// navItem is a section of the console in the bar at the top.
type navItem struct{ Key, Path string }

var navItems = []navItem{{"overview", "/"}, {"reviews", "/reviews"}, {"invites", "/invites"}, {"templates", "/templates"},
	{"webhooks", "/webhooks"}, {"suppressions", "/suppressions"}, {"settings", "/settings"}}

// Render writes page name in the layout with data, with the headers of
// every page: executed into a buffer first, so a template error never
// sends half a page. On an error it sends a short page of its own
// instead, and returns the error for the log.
func (v *Views) Render(w http.ResponseWriter, status int, name string, data any) error {
	var buf bytes.Buffer
	if err := v.tmpl[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		v.SetHeaders(w.Header())
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, internalError)
		return err
	}
	v.SetHeaders(w.Header())
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// RenderPart writes one template of a page on its own (a piece a script
// puts in place). On an error nothing is written.
func (v *Views) RenderPart(w http.ResponseWriter, name, part string, data any) error {
	var buf bytes.Buffer
	if err := v.tmpl[name].ExecuteTemplate(&buf, part, data); err != nil {
		return err
	}
	v.SetHeaders(w.Header())
	_, _ = w.Write(buf.Bytes())
	return nil
}

// internalError is the whole page when a template fails.
const internalError = "<!DOCTYPE html>\n<html lang=\"en\"><meta charset=\"utf-8\"><title>Error</title><p>Sorry, something went wrong. Please try again later.</p></html>\n"

// SetHeaders sets the headers of every console page.
func (v *Views) SetHeaders(hd http.Header) {
	if v.hsts {
		hd.Set(headerHSTS, hsts)
	}
	hd.Set("Content-Type", ContentTypeHTML)
	hd.Set(HeaderCSP, v.csp)
	hd.Set(HeaderNoSniff, "nosniff")
	hd.Set(HeaderReferrerPolicy, sameOriginReferrer)
	hd.Set(HeaderCacheControl, NoStore)
}

// ServeAsset serves the style sheet and the script under their hashed
// names, for good: a new build has new names.
func (v *Views) ServeAsset(w http.ResponseWriter, r *http.Request) {
	var a Asset
	switch r.PathValue("name") {
	case v.CSS.Name:
		a = v.CSS
	case v.JS.Name:
		a = v.JS
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.mediaType)
	w.Header().Set(HeaderNoSniff, "nosniff")
	w.Header().Set(HeaderCacheControl, "public, max-age=31536000, immutable")
	_, _ = w.Write(a.body)
}
