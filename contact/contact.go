// Package contact decides what a customer's address is, as the
// suppression list keys it: an email address in lower case, or a mobile
// number in E.164. The API, the admin CLI's import and the console read
// an address typed by a person through it. Pure.
package contact

import (
	"errors"
	"net/mail"
	"strings"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/text"
)

// MaxAddress is the longest address accepted: an email's path limit.
const MaxAddress = 254

// What may be wrong with an address; their text completes a sentence
// that begins with the field's name. A character no identifier may hold
// is a *text.Error.
var (
	ErrRequired = errors.New("is required")
	ErrTooLong  = errors.New("must be at most 254 characters")
	ErrAddress  = errors.New("must be an email address (name@example.com) or a mobile number in E.164 (+4915112345678)")
	ErrMobile   = errors.New("must be a valid mobile number in E.164 (+4915112345678)")
)

// Normalize makes an address the suppression list's key — an email in
// lower case, or a mobile number in E.164 — with its medium, or says
// what is wrong with it. A number must be given in E.164
// ("+4915112345678"): without a country there is no telling whose
// national number it is.
func Normalize(raw string) (address string, medium invite.Medium, err error) {
	a := strings.TrimSpace(raw)
	if err := text.Check(text.Identifier, a); err != nil {
		return "", "", err
	}
	switch {
	case a == "":
		return "", "", ErrRequired
	case len(a) > MaxAddress:
		return "", "", ErrTooLong
	case strings.Contains(a, "@"):
		p, err := mail.ParseAddress(a)
		if err != nil || p.Name != "" || p.Address != a {
			return "", "", ErrAddress
		}
		return strings.ToLower(a), invite.Email, nil
	case strings.HasPrefix(a, "+"):
		n, err := sms.NormalizeMobile(a, "")
		if err != nil {
			return "", "", ErrMobile
		}
		return n, invite.SMS, nil
	}
	return "", "", ErrAddress
}

// Mask shows an address as a test send's record keeps it: an email's
// first character and its domain ("s***@example.com"), a number's last
// four digits ("***5678").
func Mask(address string) string {
	if local, domain, ok := strings.Cut(address, "@"); ok && local != "" {
		return local[:1] + "***@" + domain
	}
	return "***" + address[max(len(address)-4, 0):]
}
