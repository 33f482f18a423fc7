package authserver

import (
	"crypto/hmac"
	"crypto/sha256"

	"github.com/touchpoint/touchpoint/internal/opaque"
)

// NewClientSecret returns a new client secret (256 random bits, base64url,
// shown to the operator once) and its keyed hash, the only form stored.
// key is secretkey.Derive(TOUCHPOINT_SECRET_KEY, secretkey.ClientSecret).
func NewClientSecret(key []byte) (secret string, hash []byte) {
	secret = opaque.New()
	return secret, HashClientSecret(key, secret)
}

// HashClientSecret is the keyed hash (HMAC-SHA256) stored for a secret. A
// keyed hash rather than a password hash: secrets are random 256-bit
// values, so there is nothing to brute-force and no need to be slow.
func HashClientSecret(key []byte, secret string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(secret))
	return m.Sum(nil)
}
