package sms

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// SignatureHeader carries the provider's signature on every callback.
const SignatureHeader = "X-Twilio-Signature"

// Signature computes the X-Twilio-Signature of a callback: the base64 of
// HMAC-SHA1, keyed with the auth token, over the full URL the provider
// called (scheme, host, path and query, exactly as configured) followed
// by the POST parameters sorted by name, each name immediately followed
// by its value. A name given several times contributes each value, in
// sorted order.
func Signature(authToken, fullURL string, form url.Values) string {
	var b strings.Builder
	b.WriteString(fullURL)
	names := make([]string, 0, len(form))
	for name := range form {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		values := slices.Clone(form[name])
		slices.Sort(values)
		for _, v := range values {
			b.WriteString(name)
			b.WriteString(v)
		}
	}
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// ValidateSignature reports whether signature (the X-Twilio-Signature
// header) was made with authToken over fullURL and the POST form, in
// constant time. fullURL must be the URL the provider was given — behind
// a proxy, the public one, not the one the server sees. Because the
// provider is known to sign with or without the port
// (https://host:443/… vs https://host/…), both forms are accepted, as
// Twilio's own libraries do.
func ValidateSignature(authToken, fullURL string, form url.Values, signature string) bool {
	if authToken == "" || signature == "" {
		return false
	}
	got := []byte(signature)
	ok := hmac.Equal([]byte(Signature(authToken, fullURL, form)), got)
	if other, found := portVariant(fullURL); found {
		// Both are computed, so the time taken does not tell which matched.
		ok = hmac.Equal([]byte(Signature(authToken, other, form)), got) || ok
	}
	return ok
}

// portVariant returns rawURL with its port removed, or, when it has none,
// with the scheme's default port added. Only the authority is edited, so
// the rest keeps its exact encoding.
func portVariant(rawURL string) (string, bool) {
	i := strings.Index(rawURL, "://")
	if i < 0 {
		return "", false
	}
	var defaultPort string
	switch strings.ToLower(rawURL[:i]) {
	case "https":
		defaultPort = "443"
	case "http":
		defaultPort = "80"
	default:
		return "", false
	}
	rest := rawURL[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	userinfo := ""
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		userinfo, authority = authority[:at+1], authority[at+1:]
	}
	if authority == "" {
		return "", false
	}
	head := rawURL[:i+3] + userinfo
	if c := strings.LastIndex(authority, ":"); c > strings.LastIndex(authority, "]") {
		return head + authority[:c] + tail, true
	}
	return head + authority + ":" + defaultPort + tail, true
}
