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
	"unicode"
	"unicode/utf8"
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

// ValidateDisplayName checks a shop name: 1–100 characters of valid UTF-8,
// not only spaces, with no control characters (a CR/LF would end an email
// header) and no bidirectional override or isolate characters (they could
// turn the text around it, e.g. in a subject line). Letters of every
// script, emoji and joiners are fine.
func ValidateDisplayName(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return ErrDisplayNameEmpty
	case !utf8.ValidString(s):
		return ErrDisplayNameControls
	case utf8.RuneCountInString(s) > MaxDisplayName:
		return ErrDisplayNameTooLong
	case strings.IndexFunc(s, forbiddenInName) >= 0:
		return ErrDisplayNameControls
	}
	return nil
}

// forbiddenInName reports control characters (C0, DEL, C1, line and
// paragraph separators) and the bidirectional embedding, override and
// isolate characters.
func forbiddenInName(r rune) bool {
	switch {
	case unicode.IsControl(r), r == '\u2028', r == '\u2029':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
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
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
		return ErrLogoURL
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
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
	if len(s) > MaxAddress {
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
