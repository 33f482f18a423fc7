package webhook

import (
	"errors"
	"fmt"
	"time"

	"github.com/touchpoint/touchpoint/internal/secretkey"
)

// SecretBox keeps endpoint secrets sealed at rest. A secret has to sign
// every delivery, so it cannot be stored as a hash like an API client's
// secret; it is sealed instead (secretkey.Box: AES-256-GCM under a key the
// database does not hold, derived from TOUCHPOINT_SECRET_KEY), bound to
// its endpoint's ID so a sealed secret copied to another endpoint's row
// does not open. It is safe for concurrent use.
type SecretBox struct {
	box *secretkey.Box
}

// ErrSealedSecret is returned (wrapped) for a sealed secret that does not
// open: sealed under another key, for another endpoint, or damaged.
var ErrSealedSecret = errors.New("sealed webhook secret does not open")

// NewSecretBox makes a SecretBox from a 32-byte key.
func NewSecretBox(key []byte) (*SecretBox, error) {
	box, err := secretkey.NewBox(key)
	if err != nil {
		return nil, fmt.Errorf("webhook secret box: %w", err)
	}
	return &SecretBox{box: box}, nil
}

// Seal encrypts the secret of endpointID: nonce || ciphertext.
func (b *SecretBox) Seal(endpointID, secret string) ([]byte, error) {
	sealed, err := b.box.Seal([]byte(secret), sealLabel(endpointID))
	if err != nil {
		return nil, fmt.Errorf("seal webhook secret: %w", err)
	}
	return sealed, nil
}

// Open returns the secret Seal sealed for endpointID.
func (b *SecretBox) Open(endpointID string, sealed []byte) (string, error) {
	plain, err := b.box.Open(sealed, sealLabel(endpointID))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrSealedSecret, err)
	}
	return string(plain), nil
}

// sealLabel is the additional data a secret is sealed with.
func sealLabel(endpointID string) []byte {
	return []byte("touchpoint/webhook-secret/" + endpointID)
}

// SecretOverlap is how long the previous secret still signs beside a new
// one after a rotation, so a receiver can switch without losing a
// message.
const SecretOverlap = 24 * time.Hour

// New makes a new signing secret for the endpoint: the secret, shown once
// to whoever made it, and its sealed form, for the store.
func (b *SecretBox) New(endpointID string) (secret string, sealed []byte, err error) {
	if secret, err = NewSecret(); err != nil {
		return "", nil, err
	}
	if sealed, err = b.Seal(endpointID, secret); err != nil {
		return "", nil, err
	}
	return secret, sealed, nil
}
