package pages

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
)

// The response headers of every public page, in one place.
const (
	headerCSP            = "Content-Security-Policy"
	headerContentType    = "Content-Type"
	headerNoSniff        = "X-Content-Type-Options"
	headerReferrerPolicy = "Referrer-Policy"
	headerCacheControl   = "Cache-Control"
	headerHSTS           = "Strict-Transport-Security"

	contentTypeHTML = "text/html; charset=utf-8"
	noSniff         = "nosniff"
	// The page's address carries the link's signature: never send it on.
	noReferrer = "no-referrer"
	// A page may show the reader's comment and rating: keep it out of
	// shared caches and the browser's history cache.
	noStore = "no-store"
	// hsts keeps browsers on https for a year once they have seen the
	// pages there. It names no subdomains: the pages' host may share its
	// domain with others that Touchpoint knows nothing of.
	hsts = "max-age=31536000"

	// cspFormat is the Content-Security-Policy: nothing is allowed but
	// the inline style elements whose hashes fill the %s (the page's CSS
	// and the shop's colours), https images (logo, product pictures),
	// and posting forms to the page's own origin. No script at all.
	cspFormat = "default-src 'none'; style-src %s; img-src https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

// cspHash is the CSP source expression allowing an inline style element
// whose text is exactly css.
func cspHash(css string) string {
	sum := sha256.Sum256([]byte(css))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// csp is the policy for a page with the given inline styles.
func csp(styles ...string) string {
	hashes := make([]string, len(styles))
	for i, s := range styles {
		hashes[i] = cspHash(s)
	}
	return strings.Replace(cspFormat, "%s", strings.Join(hashes, " "), 1)
}

// SetHSTS keeps browsers on https for the site: for every public answer
// of a service whose base URL is https.
func SetHSTS(h http.Header) { h.Set(headerHSTS, hsts) }

// setHeaders sets the headers every public page carries; Strict-
// Transport-Security when the pages are served on https (withHSTS).
func setHeaders(h http.Header, policy string, withHSTS bool) {
	if withHSTS {
		SetHSTS(h)
	}
	h.Set(headerContentType, contentTypeHTML)
	h.Set(headerCSP, policy)
	h.Set(headerNoSniff, noSniff)
	h.Set(headerReferrerPolicy, noReferrer)
	h.Set(headerCacheControl, noStore)
}
