package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// SecretBox keeps endpoint secrets sealed at rest. A secret has to sign
// every delivery, so it cannot be stored as a hash like an API client's
// secret; it is encrypted with AES-256-GCM instead, under a key the
// database does not hold (derived from TOUCHPOINT_SECRET_KEY), and bound
// to its endpoint's ID so a sealed secret copied to another endpoint's row
// does not open. It is safe for concurrent use.
type SecretBox struct {
	aead cipher.AEAD
}

// ErrSealedSecret is returned (wrapped) for a sealed secret that does not
// open: sealed under another key, for another endpoint, or damaged.
var ErrSealedSecret = errors.New("sealed webhook secret does not open")

// NewSecretBox makes a SecretBox from a 32-byte key.
func NewSecretBox(key []byte) (*SecretBox, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("webhook secret box: key of %d bytes, want 32", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("webhook secret box: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("webhook secret box: %w", err)
	}
	return &SecretBox{aead: aead}, nil
}

// Seal encrypts the secret of endpointID: nonce || ciphertext.
func (b *SecretBox) Seal(endpointID, secret string) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(secret)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal webhook secret: %w", err)
	}
	return b.aead.Seal(nonce, nonce, []byte(secret), sealLabel(endpointID)), nil
}

// Open returns the secret Seal sealed for endpointID.
func (b *SecretBox) Open(endpointID string, sealed []byte) (string, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return "", fmt.Errorf("%w: too short", ErrSealedSecret)
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], sealLabel(endpointID))
	if err != nil {
		return "", fmt.Errorf("%w (was TOUCHPOINT_SECRET_KEY changed?)", ErrSealedSecret)
	}
	return string(plain), nil
}

// sealLabel is the additional data a secret is sealed with.
func sealLabel(endpointID string) []byte {
	return []byte("touchpoint/webhook-secret/" + endpointID)
}
