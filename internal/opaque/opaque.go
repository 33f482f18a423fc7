// Package opaque makes the random tokens handed to browsers and clients
// (a sign-in link's token, a code, a session cookie, a client secret)
// and the hash kept in their place.
package opaque

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// Len is the length of a token: 32 random bytes in base64url.
const Len = 43

// New returns a new token: 256 random bits, base64url without padding.
func New() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand panics instead)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Hash is what is stored of a token: its SHA-256. A token is 256 random
// bits, so there is nothing to brute-force and no need for a slow or
// keyed hash.
func Hash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// WellFormed reports whether s could be a token (or anything else of 32
// bytes in base64url, such as a PKCE code challenge): a value that is not
// is refused before it is looked up.
func WellFormed(s string) bool {
	if len(s) != Len {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}
