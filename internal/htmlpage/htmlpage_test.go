package htmlpage_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/touchpoint/touchpoint/internal/htmlpage"
)

func site(t *testing.T) *htmlpage.Site {
	t.Helper()
	fsys := os.DirFS("testdata")
	texts, err := htmlpage.LoadTexts(fsys, "locales/*.json")
	require.NoError(t, err)
	s, err := htmlpage.New(htmlpage.Options{Pages: fsys, Names: []string{"hello", "broken"}, Texts: texts,
		FormAction: []string{"https://console.example"}, HSTS: true})
	require.NoError(t, err)
	return s
}

// TestPageHeaders: the policy allows the one stylesheet by its hash, no
// script, no framing, and forms to the page's origin and the ones named.
func TestPageHeaders(t *testing.T) {
	t.Parallel()
	s := site(t)
	rec := httptest.NewRecorder()
	require.NoError(t, s.Render(rec, http.StatusOK, "hello", "de-AT", "Anna"))
	h := rec.Header()
	csp := h.Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "frame-ancestors 'none'")
	assert.Contains(t, csp, "form-action 'self' https://console.example;")
	assert.NotContains(t, csp, "script-src")
	assert.NotContains(t, csp, "unsafe-inline")
	assert.Equal(t, "DENY", h.Get("X-Frame-Options"))
	assert.Equal(t, "no-store", h.Get("Cache-Control"))
	assert.Equal(t, "same-origin", h.Get("Referrer-Policy"), "not no-referrer: browsers then send Origin: null with a post")
	assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	assert.NotEmpty(t, h.Get("Strict-Transport-Security"))

	doc, err := html.Parse(strings.NewReader(rec.Body.String()))
	require.NoError(t, err)
	var styles []string
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "style" {
			styles = append(styles, n.FirstChild.Data)
		}
		assert.NotEqual(t, "script", n.Data, "no script element")
	}
	require.Len(t, styles, 1)
	sum := sha256.Sum256([]byte(styles[0]))
	assert.Contains(t, csp, "style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'", "the stylesheet as sent is the one hashed")
	assert.Contains(t, rec.Body.String(), `<html lang="de">`)
}

// TestValuesAreEscapedAndIsolated: a value inserted into a text is
// escaped and kept in its own direction.
func TestValuesAreEscapedAndIsolated(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	require.NoError(t, site(t).Render(rec, http.StatusOK, "hello", "en", "<script>x</script>\u202e"))
	body := rec.Body.String()
	assert.Contains(t, body, "Hello, <bdi>&lt;script&gt;x&lt;/script&gt;\u202e</bdi>!")
	assert.NotRegexp(t, regexp.MustCompile(`<script>`), body)
}

// TestBrokenPageSendsNothingHalf: a template error answers a bare 500
// and is returned, never half a page.
func TestBrokenPageSendsNothingHalf(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	err := site(t).Render(rec, http.StatusOK, "broken", "en", nil)
	assert.ErrorContains(t, err, "no_such_key")
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.NotContains(t, rec.Body.String(), "<style>")
}
