// Package secretkey derives purpose-specific keys from TOUCHPOINT_SECRET_KEY,
// so one configured secret never keys two different mechanisms and a key
// leaked from one purpose says nothing about another.
package secretkey

import (
	"crypto/hmac"
	"crypto/sha256"
)

// Purposes of derived keys. A purpose string must never be reused for a
// different mechanism: changing it changes every key derived for it.
const (
	ClientSecret   = "client-secret"        // keyed hash of API client secrets
	SigningKeySeal = "signing-key-seal"     // AES-GCM sealing of the issuer's private keys
	FeedbackLink   = "feedback-link"        // signature of feedback links
	Unsubscribe    = "unsubscribe-link"     // signature of unsubscribe links (RFC 8058)
	WebhookSecret  = "webhook-secret"       // AES-GCM sealing of webhook endpoint secrets
	PublicationKey = "publication-key-seal" // AES-GCM sealing of the accounts' publication keys
	ConsoleSignIn  = "console-sign-in"      // AES-GCM sealing of the console's sign-in state cookie
)

// Derive returns the 32-byte key for purpose: HMAC-SHA256 keyed with the
// master secret over a domain-separated label (one HKDF-Expand block; the
// master is operator-chosen and already high-entropy, so no extract step).
func Derive(master, purpose string) []byte {
	m := hmac.New(sha256.New, []byte(master))
	m.Write([]byte("touchpoint/v1/" + purpose))
	m.Write([]byte{1}) // HKDF-Expand block counter
	return m.Sum(nil)
}
