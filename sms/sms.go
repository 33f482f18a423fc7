// Package sms sends invites as text messages through the Twilio Messages
// API — which several other providers speak too — and holds what SMS
// needs around that: mobile numbers in E.164 (NormalizeMobile), segment
// counting (Segments), the signature on the provider's callbacks
// (ValidateSignature) and parsers for them (ParseStatus, ParseInbound).
//
// A failed send is an *Error that unwraps to a *senderr.Error, so the
// send step classifies it exactly like an email's: senderr.KindOf tells
// Transient (retry), Permanent (give up) and Uncertain (the provider may
// have taken it: never send again); senderr.RecipientOf tells a number the
// provider refuses for good (RecipientRefused: suppress it as bounced)
// and one whose owner replied STOP (RecipientOptedOut: suppress it as
// unsubscribed). A region the account may not send to is no fault of the
// number (CodeRegionNotPermitted).
//
// Error texts never carry the full number (only MaskNumber's form) nor
// the auth token, because they end up in Temporal's history and in logs.
package sms

import (
	"regexp"
	"strings"

	"github.com/touchpoint/touchpoint/senderr"
	"github.com/touchpoint/touchpoint/text"
)

// Error is a failed send. What it means is on the *senderr.Error it
// unwraps to (senderr.KindOf, senderr.RecipientOf); what only the
// provider's API has is here.
type Error struct {
	// Status is the provider's HTTP status, 0 when no answer came.
	Status int
	// Code is the provider's error code (21211: invalid number), 0 if none.
	Code int

	send  *senderr.Error
	cause error
}

func (e *Error) Error() string { return e.send.Error() }

// Unwrap gives the *senderr.Error and, if any, the transport error
// (context.DeadlineExceeded, a *net.OpError, …).
func (e *Error) Unwrap() []error {
	if e.cause == nil {
		return []error{e.send}
	}
	return []error{e.send, e.cause}
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
// the whole made one clean line (text.Diagnostic) and kept short.
func redact(msg string, secrets ...string) string {
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "***")
		}
	}
	msg = longDigits.ReplaceAllStringFunc(msg, func(m string) string {
		if countDigits(m) < 7 {
			return m
		}
		return MaskNumber(m)
	})
	msg = text.Clean(text.Diagnostic, msg)
	const maxText = 300
	if r := []rune(msg); len(r) > maxText {
		msg = string(r[:maxText]) + "…"
	}
	return msg
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
