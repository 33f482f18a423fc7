// Package webform walks server-rendered pages as a browser without
// script does: a cookie jar, redirects seen one at a time, the forms of a
// page read from its HTML and posted with the Origin a browser sends. For
// tests of sign-in flows that need no rendering.
package webform

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/mail"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Browser is one browser: its cookies and the pages it has seen.
type Browser struct {
	t    testing.TB
	HTTP *http.Client
	// Header is sent with every request (Accept-Language, …).
	Header http.Header
}

// New is a browser with an empty cookie jar that does not follow
// redirects by itself.
func New(t testing.TB) *Browser {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &Browser{t: t, Header: http.Header{}, HTTP: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Page is an answer, its body read and parsed.
type Page struct {
	*http.Response
	URL  *url.URL
	Body string
	Doc  *html.Node
}

// Get loads target.
func (b *Browser) Get(target string) *Page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, target, nil)
	require.NoError(b.t, err)
	return b.Do(req)
}

// Do sends req with the browser's cookies and headers.
func (b *Browser) Do(req *http.Request) *Page {
	b.t.Helper()
	for k, vs := range b.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := b.HTTP.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	p := &Page{Response: resp, URL: req.URL, Body: string(raw)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		p.Doc, err = html.Parse(strings.NewReader(p.Body))
		require.NoError(b.t, err)
	}
	return p
}

// Follow loads the Location of a redirect, resolved against the page.
func (b *Browser) Follow(p *Page) *Page {
	b.t.Helper()
	require.NotEmpty(b.t, p.Header.Get("Location"), "%s answered %d without a Location", p.URL, p.StatusCode)
	return b.Get(p.Location().String())
}

// Location is the page's redirect target, resolved against its URL.
func (p *Page) Location() *url.URL {
	u, err := p.URL.Parse(p.Header.Get("Location"))
	if err != nil {
		return nil
	}
	return u
}

// Form is a form of a page.
type Form struct {
	Action *url.URL
	Method string
	Values url.Values
}

// Forms are the page's forms with the values a browser would send
// unchanged: inputs with a value (checked ones, for radios and
// checkboxes), textareas, the selected options.
func (p *Page) Forms() []Form {
	var out []Form
	if p.Doc == nil {
		return nil
	}
	for n := range p.Doc.Descendants() {
		if n.Type != html.ElementNode || n.DataAtom != atom.Form {
			continue
		}
		f := Form{Method: strings.ToUpper(Attr(n, "method")), Values: url.Values{}}
		if f.Method == "" {
			f.Method = http.MethodGet
		}
		f.Action, _ = p.URL.Parse(Attr(n, "action"))
		for c := range n.Descendants() {
			if c.Type != html.ElementNode {
				continue
			}
			name := Attr(c, "name")
			switch {
			case name == "":
			case c.DataAtom == atom.Input:
				typ := Attr(c, "type")
				if (typ == "radio" || typ == "checkbox") && !Has(c, "checked") || typ == "submit" {
					continue
				}
				f.Values.Add(name, Attr(c, "value"))
			case c.DataAtom == atom.Textarea:
				f.Values.Add(name, Text(c))
			}
		}
		out = append(out, f)
	}
	return out
}

// Form is the page's one form whose action ends with path.
func (p *Page) Form(t testing.TB, path string) Form {
	t.Helper()
	var found []Form
	for _, f := range p.Forms() {
		if f.Action != nil && strings.HasSuffix(f.Action.Path, path) {
			found = append(found, f)
		}
	}
	require.Len(t, found, 1, "forms posting to %s on %s:\n%s", path, p.URL, p.Body)
	return found[0]
}

// Submit sends a form as a browser does, from the page's origin, with
// set changing some of its values.
func (b *Browser) Submit(from *Page, f Form, set map[string]string) *Page {
	b.t.Helper()
	v := url.Values{}
	for k, vs := range f.Values {
		v[k] = append([]string(nil), vs...)
	}
	for k, val := range set {
		v.Set(k, val)
	}
	if f.Method == http.MethodGet {
		u := *f.Action
		u.RawQuery = v.Encode()
		return b.Get(u.String())
	}
	req, err := http.NewRequest(f.Method, f.Action.String(), strings.NewReader(v.Encode()))
	require.NoError(b.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", from.URL.Scheme+"://"+from.URL.Host)
	return b.Do(req)
}

// Attr is an element's attribute, "" when absent.
func Attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

// Has reports whether the element has the attribute.
func Has(n *html.Node, name string) bool {
	for _, a := range n.Attr {
		if a.Key == name {
			return true
		}
	}
	return false
}

// Text is the text within a node, its whitespace collapsed.
func Text(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// Find returns the elements under n for which match is true.
func Find(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for c := range n.Descendants() {
		if c.Type == html.ElementNode && match(c) {
			out = append(out, c)
		}
	}
	return out
}

// Title is the text of the page's h1.
func (p *Page) Title() string {
	if p.Doc == nil {
		return ""
	}
	for _, h := range Find(p.Doc, func(n *html.Node) bool { return n.DataAtom == atom.H1 }) {
		return Text(h)
	}
	return ""
}

// MailText is the decoded text/plain part of a raw mail (an .eml file,
// a message an SMTP listener took): where a sign-in link is read.
func MailText(t testing.TB, raw []byte) string {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	require.NoError(t, err)
	if !strings.HasPrefix(mt, "multipart/") {
		b, err := io.ReadAll(m.Body)
		require.NoError(t, err)
		return string(b)
	}
	r := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := r.NextPart() // decodes quoted-printable
		require.NoError(t, err, "no text/plain part")
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/plain") {
			b, err := io.ReadAll(p)
			require.NoError(t, err)
			return string(b)
		}
	}
}
