package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// SecretPrefix marks a Standard Webhooks signing secret, so that a secret
// pasted into the wrong place is recognisable.
const SecretPrefix = "whsec_"

// Key sizes. Standard Webhooks asks for at least 24 random bytes and at
// most 64; NewSecret makes 32.
const (
	secretSize   = 32
	minSecretLen = 24
	maxSecretLen = 64
)

// ErrInvalidSecret is returned (wrapped) for a secret that is not
// "whsec_" + standard base64 of 24 to 64 bytes.
var ErrInvalidSecret = errors.New("invalid webhook secret")

// NewSecret returns a fresh endpoint secret: "whsec_" followed by the
// standard base64 encoding of 32 random bytes. It is shown to the shop once
// (on create and on rotation) and must be stored to sign every delivery.
func NewSecret() (string, error) {
	key := make([]byte, secretSize)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// ParseSecret returns the HMAC key a secret encodes. The prefix is
// required: every secret Touchpoint issues has it, and a value without it
// is more likely something else stored by mistake.
func ParseSecret(s string) ([]byte, error) {
	enc, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: missing %q prefix", ErrInvalidSecret, SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("%w: not standard base64", ErrInvalidSecret)
	}
	if len(key) < minSecretLen || len(key) > maxSecretLen {
		return nil, fmt.Errorf("%w: %d bytes, want %d to %d", ErrInvalidSecret, len(key), minSecretLen, maxSecretLen)
	}
	return key, nil
}
