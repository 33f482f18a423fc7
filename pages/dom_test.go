package pages_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// doc is a rendered page, parsed as a browser would parse it.
type doc struct {
	t    *testing.T
	root *html.Node
	rec  *httptest.ResponseRecorder
}

func parse(t *testing.T, rec *httptest.ResponseRecorder) doc {
	t.Helper()
	root, err := html.Parse(strings.NewReader(rec.Body.String()))
	require.NoError(t, err)
	return doc{t: t, root: root, rec: rec}
}

// all returns the elements, in document order, for which match is true.
func (d doc) all(match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for n := range d.root.Descendants() {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
	}
	return out
}

func (d doc) tag(a atom.Atom) []*html.Node {
	return d.all(func(n *html.Node) bool { return n.DataAtom == a })
}

// one returns the single element for which match is true.
func (d doc) one(what string, match func(*html.Node) bool) *html.Node {
	d.t.Helper()
	ns := d.all(match)
	require.Len(d.t, ns, 1, what)
	return ns[0]
}

func (d doc) byID(id string) *html.Node {
	d.t.Helper()
	return d.one("#"+id, func(n *html.Node) bool { return attr(n, "id") == id })
}

func (d doc) hasID(id string) bool {
	return len(d.all(func(n *html.Node) bool { return attr(n, "id") == id })) > 0
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, name string) bool {
	for _, a := range n.Attr {
		if a.Key == name {
			return true
		}
	}
	return false
}

// text is the text content of n, with runs of white space made one space.
func text(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	if n.Type == html.TextNode {
		b.WriteString(n.Data)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// rawText is the text content of n exactly as parsed.
func rawText(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

func ancestor(n *html.Node, a atom.Atom) *html.Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.DataAtom == a {
			return p
		}
	}
	return nil
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

// within reports whether n lies inside root.
func within(n, root *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p == root {
			return true
		}
	}
	return false
}
