// Package sms sends invites as text messages through the Twilio Messages
// API — which several other providers speak too — and holds what SMS
// needs around that: mobile numbers in E.164 (NormalizeMobile), segment
// counting (Segments), the signature on the provider's callbacks
// (ValidateSignature) and parsers for them (ParseStatus, ParseInbound).
//
// A failed send is an *Error that unwraps to a *mail.Error, so the invite
// activities classify it exactly like an email: mail.KindOf tells
// Transient (retry), Permanent (fail) and Uncertain (the provider may have
// taken it: never send again); mail.RecipientRefused tells a number the
// provider refuses for good (suppress it as bounced). Unsubscribed tells
// the one case email has no word for: the recipient replied STOP.
//
// Error texts never carry the full number (only MaskNumber's form) nor
// the auth token, because they end up in Temporal's history and in logs.
package sms

import (
	"errors"
	"regexp"
	"strings"

	"github.com/touchpoint/touchpoint/mail"
)

// Error is a failed send. Its kind and whether the number itself was
// refused are on the *mail.Error it unwraps to (mail.KindOf,
// mail.RecipientRefused); what only SMS has is here.
type Error struct {
	// Status is the provider's HTTP status, 0 when no answer came.
	Status int
	// Code is the provider's error code (21211: invalid number), 0 if none.
	Code int
	// Unsubscribed: the recipient opted out by replying STOP (21610).
	// It is also RecipientRefused, so check it first: the number is
	// suppressed as unsubscribed, not bounced.
	Unsubscribed bool

	mail  *mail.Error
	cause error
}

func (e *Error) Error() string { return e.mail.Error() }

// Unwrap gives the *mail.Error and, if any, the transport error
// (context.DeadlineExceeded, a *net.OpError, …).
func (e *Error) Unwrap() []error {
	if e.cause == nil {
		return []error{e.mail}
	}
	return []error{e.mail, e.cause}
}

// Unsubscribed reports whether err says the recipient opted out (see
// Error.Unsubscribed).
func Unsubscribed(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Unsubscribed
}

// MaskNumber hides all but the last four digits of a number, for logs and
// error texts: "+4915112345678" → "***5678".
func MaskNumber(n string) string {
	digits := make([]byte, 0, len(n))
	for i := 0; i < len(n); i++ {
		if n[i] >= '0' && n[i] <= '9' {
			digits = append(digits, n[i])
		}
	}
	if len(digits) <= 4 {
		return "***"
	}
	return "***" + string(digits[len(digits)-4:])
}

// longDigits is anything long enough to be a phone number: providers echo
// the number in their messages, in whatever form it was sent. Error codes
// (five digits) stay readable.
var longDigits = regexp.MustCompile(`\+?[0-9][0-9 ()./-]{5,}[0-9]`)

// redact makes a provider's or transport's text safe to keep: every
// secret given is removed, every phone-number-like run of digits masked,
// control characters become spaces, and the result is kept short.
func redact(text string, secrets ...string) string {
	for _, s := range secrets {
		if s != "" {
			text = strings.ReplaceAll(text, s, "***")
		}
	}
	text = longDigits.ReplaceAllStringFunc(text, func(m string) string {
		if countDigits(m) < 7 {
			return m
		}
		return MaskNumber(m)
	})
	text = strings.Join(strings.FieldsFunc(text, func(r rune) bool { return r < 0x20 || r == 0x7f }), " ")
	const maxText = 300
	if r := []rune(text); len(r) > maxText {
		text = string(r[:maxText]) + "…"
	}
	return text
}

func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}
