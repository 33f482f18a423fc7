package secretkey

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// Box seals what must be kept at rest but used again in full (private
// keys, webhook secrets): AES-256-GCM under a derived key that the
// database does not hold. Each sealed value is bound to a label naming
// its row, so a value copied to another row does not open. It is safe for
// concurrent use.
type Box struct {
	aead cipher.AEAD
}

// ErrSealed is returned (wrapped) for a sealed value that does not open:
// sealed under another key, for another row, or damaged.
var ErrSealed = errors.New("sealed value does not open (was TOUCHPOINT_SECRET_KEY changed?)")

// NewBox makes a Box from a 32-byte key (Derive's).
func NewBox(key []byte) (*Box, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secret box: key of %d bytes, want 32", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret box: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret box: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plain for label: nonce || ciphertext.
func (b *Box) Seal(plain, label []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return b.aead.Seal(nonce, nonce, plain, label), nil
}

// Open returns what Seal sealed for label.
func (b *Box) Open(sealed, label []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, fmt.Errorf("%w: too short", ErrSealed)
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], label)
	if err != nil {
		return nil, ErrSealed
	}
	return plain, nil
}
