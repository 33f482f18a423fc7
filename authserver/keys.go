package authserver

import (
	"context"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/touchpoint/touchpoint/store"
)

// Algorithm is the JWS algorithm of the built-in issuer: RS256 is the one
// every OIDC library must support (go-oidc's default), so any API gateway
// or SDK a client puts in front of Touchpoint can verify our tokens too.
const Algorithm = jose.RS256

const rsaBits = 2048

// signingKey is a stored key made usable: signer is nil when the key
// cannot be unsealed (sealed under another TOUCHPOINT_SECRET_KEY); it is
// then still published, never used.
type signingKey struct {
	kid     string
	created time.Time
	public  jose.JSONWebKey
	signer  jose.Signer
}

// keyRing is the in-memory copy of the signing_keys table.
type keyRing struct {
	current   *signingKey       // the newest usable key: it signs
	published []jose.JSONWebKey // what the JWKS serves
	byKID     map[string]*signingKey
}

// keys loads, creates and rotates signing keys. Several auth replicas
// share the table: creation happens under an advisory lock after looking
// at what is stored, so they agree on one current key, and every replica
// reloads periodically (and the JWKS on every request) to converge.
type keys struct {
	store    *store.Store
	sealKey  []byte
	now      func() time.Time
	rotation time.Duration
	// retain is how long a superseded key stays published after its
	// successor was created: the longest token lifetime plus the time
	// other replicas may still sign with it before they reload.
	retain time.Duration

	reload sync.Mutex // serialises loads
	mu     sync.RWMutex
	ring   keyRing
}

// ensure creates a key when there is no usable key younger than the
// rotation age, or always when force is set (Rotate).
func (k *keys) ensure(ctx context.Context, force bool) error {
	now := k.now()
	_, err := k.store.EnsureSigningKey(ctx, func(existing []store.SigningKey) (*store.SigningKey, error) {
		if !force {
			for _, sk := range existing {
				if _, err := k.unseal(sk); err == nil {
					if now.Sub(sk.CreatedAt) < k.rotation {
						return nil, nil
					}
					break // the newest usable key is too old
				}
			}
		}
		created := now
		if len(existing) > 0 && !created.After(existing[0].CreatedAt) {
			// The new key must sort first even when the clock has not
			// moved (or lags another replica's): stored times are µs.
			created = existing[0].CreatedAt.Add(time.Microsecond)
		}
		return k.generate(created)
	})
	if err != nil {
		return fmt.Errorf("ensure signing key: %w", err)
	}
	return nil
}

// generate makes a new RSA key sealed for storage; its kid is the RFC 7638
// thumbprint of the public key.
func (k *keys) generate(now time.Time) (*store.SigningKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, rsaBits)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	pub := jose.JSONWebKey{Key: &priv.PublicKey, Algorithm: string(Algorithm), Use: "sig"}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("thumbprint: %w", err)
	}
	pub.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	jwk, err := json.Marshal(pub)
	if err != nil {
		return nil, fmt.Errorf("marshal jwk: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("marshal key: %w", err)
	}
	sealed, err := k.seal(der, pub.KeyID)
	if err != nil {
		return nil, err
	}
	return &store.SigningKey{KID: pub.KeyID, Algorithm: string(Algorithm), PrivateKey: sealed,
		PublicJWK: string(jwk), CreatedAt: now.UTC()}, nil
}

// seal encrypts with AES-256-GCM: nonce || ciphertext. The kid is the
// additional data, so a sealed key cannot be moved to another row.
func (k *keys) seal(plain []byte, kid string) ([]byte, error) {
	aead, err := k.aead()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	return aead.Seal(nonce, nonce, plain, []byte(kid)), nil
}

func (k *keys) aead() (cipher.AEAD, error) {
	block, err := aes.NewCipher(k.sealKey)
	if err != nil {
		return nil, fmt.Errorf("seal cipher: %w", err)
	}
	return cipher.NewGCM(block)
}

// unseal turns a stored key into a signer.
func (k *keys) unseal(sk store.SigningKey) (jose.Signer, error) {
	aead, err := k.aead()
	if err != nil {
		return nil, err
	}
	if len(sk.PrivateKey) < aead.NonceSize() {
		return nil, errors.New("sealed key too short")
	}
	nonce, box := sk.PrivateKey[:aead.NonceSize()], sk.PrivateKey[aead.NonceSize():]
	der, err := aead.Open(nil, nonce, box, []byte(sk.KID))
	if err != nil {
		return nil, errors.New("cannot unseal (was TOUCHPOINT_SECRET_KEY changed?)")
	}
	priv, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parse key: %w", err)
	}
	return jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(sk.Algorithm), Key: jose.JSONWebKey{Key: priv, KeyID: sk.KID}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
}

// load reads every key from the database and rebuilds the ring, keeping
// already unsealed keys.
func (k *keys) load(ctx context.Context) error {
	k.reload.Lock()
	defer k.reload.Unlock()
	stored, err := k.store.SigningKeys(ctx)
	if err != nil {
		return err
	}
	old := k.snapshot()
	now := k.now()
	ring := keyRing{byKID: make(map[string]*signingKey, len(stored))}
	var successor time.Time // created_at of the next newer key
	for i, sk := range stored {
		// Keys come newest first: a key stays published while tokens it
		// signed before its successor took over can still be valid.
		if i > 0 && now.Sub(successor) > k.retain {
			break
		}
		successor = sk.CreatedAt
		key := old.byKID[sk.KID]
		if key == nil {
			key = &signingKey{kid: sk.KID, created: sk.CreatedAt}
			if err := json.Unmarshal([]byte(sk.PublicJWK), &key.public); err != nil {
				return fmt.Errorf("signing key %s: public jwk: %w", sk.KID, err)
			}
			key.signer, _ = k.unseal(sk) // an unusable key is published, not used
		}
		ring.byKID[sk.KID] = key
		ring.published = append(ring.published, key.public)
		if ring.current == nil && key.signer != nil {
			ring.current = key
		}
	}
	if ring.current == nil {
		return errors.New("no usable signing key")
	}
	k.mu.Lock()
	k.ring = ring
	k.mu.Unlock()
	return nil
}

func (k *keys) snapshot() keyRing {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.ring
}
