// Package brand describes how a shop presents itself to its customers:
// the name, logo, colour and reply address that the invite emails and the
// public pages show, the checks the API applies before storing them, and
// the contrast rules that decide where the shop's colour may be used
// without making text hard to read.
package brand

import (
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/touchpoint/touchpoint/text"
)

// Brand is an account's branding as the customer sees it.
type Brand struct {
	DisplayName string // the shop's name in subjects, greetings and page headings
	LogoURL     string // https URL of the logo, or ""
	Color       string // "#RRGGBB", or "" for Touchpoint's own colour
	ReplyTo     string // email address for replies, or ""
}

// Limits of the branding fields.
const (
	MaxDisplayName = 100  // characters (runes)
	MaxURL         = 1024 // bytes, the API's limit for string fields
	MaxAddress     = 254  // bytes, the longest address SMTP can carry (RFC 5321 path limit)
)

// Validation errors; the API shows their text as the field's message.
var (
	ErrDisplayNameEmpty    = errors.New("must not be empty")
	ErrDisplayNameTooLong  = fmt.Errorf("must be at most %d characters", MaxDisplayName)
	ErrDisplayNameControls = errors.New("must not contain control or text-direction characters")
	ErrColor               = errors.New(`must be a colour in the form "#RRGGBB"`)
	ErrLogoURL             = errors.New("must be an absolute https URL")
	ErrLogoURLTooLong      = fmt.Errorf("must be at most %d bytes", MaxURL)
	ErrReplyTo             = errors.New("must be a plain email address, like shop@example.com")
)

// ValidateDisplayName checks a shop name: 1–100 characters, not only
// spaces, that text.Name accepts (no control character, which could end
// an email header, and no bidirectional override or isolate, which could
// turn the text around it, e.g. in a subject line). Letters of every
// script, emoji and joiners are fine.
func ValidateDisplayName(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return ErrDisplayNameEmpty
	case text.Check(text.Name, s) != nil:
		return ErrDisplayNameControls
	case utf8.RuneCountInString(s) > MaxDisplayName:
		return ErrDisplayNameTooLong
	}
	return nil
}

// ValidateColor checks a brand colour: "" (no colour) or "#RRGGBB" in
// hexadecimal digits of either case.
func ValidateColor(s string) error {
	if s == "" {
		return nil
	}
	if _, err := ParseColor(s); err != nil {
		return ErrColor
	}
	return nil
}

// ValidateLogoURL checks a logo address: "" (no logo) or an absolute
// https URL with a host and without user information. Only https is
// allowed because the public pages allow images from https: alone and an
// http image in an email shows as mixed content.
func ValidateLogoURL(s string) error {
	if s == "" {
		return nil
	}
	if len(s) > MaxURL {
		return ErrLogoURLTooLong
	}
	if u, err := url.Parse(s); text.Check(text.URL, s) != nil || err != nil || u.Scheme != "https" {
		return ErrLogoURL
	}
	return nil
}

// ValidateReplyTo checks a reply address: "" (none) or a bare email
// address ("shop@example.com", not "Shop <shop@example.com>": the display
// name comes from DisplayName), at most 254 bytes.
func ValidateReplyTo(s string) error {
	if s == "" {
		return nil
	}
	if len(s) > MaxAddress || text.Check(text.Identifier, s) != nil {
		return ErrReplyTo
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return ErrReplyTo
	}
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || !strings.Contains(strings.Trim(domain, "."), ".") || strings.HasPrefix(domain, "[") {
		return ErrReplyTo
	}
	return nil
}
