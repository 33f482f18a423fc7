package webhook

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/touchpoint/touchpoint/internal/problem"
	"github.com/touchpoint/touchpoint/text"
)

// MaxURLLength bounds an endpoint URL.
const MaxURLLength = 2048

// The kinds of problem of an endpoint URL, for a reader that says them
// in its own words (errors.Is); each error's text is the detail written
// for API clients.
var (
	ErrURLForm      = errors.New("not an absolute URL with a host, without user, password or fragment")
	ErrURLNotHTTPS  = errors.New("not https")
	ErrURLNotPublic = errors.New("not a public address")
)

// formProblem is a refusal of kind ErrURLForm.
func formProblem(format string, args ...any) error {
	return problem.New(ErrURLForm, fmt.Sprintf(format, args...))
}

// ValidateURL checks an endpoint URL given to the API (create or patch).
// The messages read after the field name ("url must use https").
//
// It refuses what can be judged from the text: not absolute, a scheme other
// than https (http is allowed too with allowPrivate, for development), no
// host, a user name or password, a fragment, a bad port, an IPv4 address
// spelt other than as a.b.c.d (see numericHost), a literal IP address that
// is not public (nonPublic: IPv4 inside IPv6 included), and "localhost". A
// host name is not resolved here: what it resolves to can change, so
// Client checks the address it actually connects to.
func ValidateURL(raw string, allowPrivate bool) error {
	u, err := checkURLForm(raw, allowPrivate)
	if err != nil || allowPrivate {
		return err
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if kind := nonPublic(ip); kind != "" {
			return problem.New(ErrURLNotPublic, fmt.Sprintf("must point to a public address; %s is a %s address", host, kind))
		}
		return nil
	}
	if h := strings.TrimSuffix(strings.ToLower(host), "."); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return problem.New(ErrURLNotPublic, fmt.Sprintf("must point to a public address; %s is this machine", host))
	}
	return nil
}

// checkURLForm is the part of ValidateURL that Client repeats before each
// delivery, leaving addresses to the dial-time check.
func checkURLForm(raw string, allowPrivate bool) (*url.URL, error) {
	if len(raw) > MaxURLLength {
		return nil, formProblem("must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return nil, formProblem("must be an absolute URL such as https://example.com/webhooks")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	case u.Scheme == "http":
		return nil, problem.New(ErrURLNotHTTPS, "must use https")
	default:
		return nil, problem.New(ErrURLNotHTTPS, "must use https, not "+u.Scheme)
	}
	if u.User != nil {
		return nil, formProblem("must not contain a user name or password; authenticate requests by their signature")
	}
	if u.Hostname() == "" {
		return nil, formProblem("must have a host")
	}
	if numeric, ok := numericHost(u.Hostname()); numeric && !ok {
		return nil, formProblem("must write an IPv4 address as four decimal numbers such as 93.184.215.14; "+
			"%s is a spelling that resolvers read as another address", u.Hostname())
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, formProblem("must have a port between 1 and 65535")
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, formProblem("must have a port after the colon")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, formProblem("must not have a fragment (#…); it is never sent")
	}
	if err := text.Check(text.URL, raw); err != nil {
		return nil, problem.New(ErrURLForm, err.Error()) // a character no URL field may hold
	}
	return u, nil
}
