package publication

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/touchpoint/touchpoint/internal/sealedjwk"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

// Algorithm signs the proofs: EdDSA over Ed25519, whose signatures are
// deterministic, so the same review signed with the same key gives the
// same proof and a public answer keeps its strong ETag.
const Algorithm = jose.EdDSA

// ProofType is the "typ" header of a proof.
const ProofType = "review-proof+jws"

// keysFor is how long a replica reuses an account's keys before reading
// them again: after a rotation on another replica, this one signs with
// the older key for at most that long (the older key stays published, so
// those proofs verify too).
const keysFor = 30 * time.Second

// maxCachedAccounts bounds the cache of unsealed keys; only accounts
// that exist are cached, and when more are asked for, the cache starts
// afresh.
const maxCachedAccounts = 10_000

// Keys keeps the accounts' publication keys: made on first use, sealed
// for storage like the issuer's signing keys (AES-256-GCM under a key
// derived from TOUCHPOINT_SECRET_KEY, bound to the account and the kid),
// rotated on request, every key ever made published in the account's
// JWKS.
type Keys struct {
	store  KeyStore
	box    *secretkey.Box // seals the private keys
	now    func() time.Time
	proofs *proofCache

	mu    sync.Mutex
	rings map[string]*keyRing
}

// KeyStore keeps the sealed keys (store/reviewdb).
type KeyStore interface {
	PublicationKeys(ctx context.Context, accountID string) ([]reviewdb.PublicationKey, error)
	AddPublicationKey(ctx context.Context, accountID string,
		decide func(existing []reviewdb.PublicationKey) (*reviewdb.PublicationKey, error)) ([]reviewdb.PublicationKey, error)
}

// keyRing is an account's keys as loaded: the newest usable one signs.
type keyRing struct {
	loaded time.Time
	kid    string
	signer jose.Signer // nil: no key can be unsealed (never kept)
	jwks   jose.JSONWebKeySet
}

// NewKeys keeps publication keys in st, sealed with sealKey (32 bytes:
// secretkey.Derive(TOUCHPOINT_SECRET_KEY, secretkey.PublicationKey)).
func NewKeys(st KeyStore, sealKey []byte, now func() time.Time) (*Keys, error) {
	box, err := secretkey.NewBox(sealKey)
	if err != nil {
		return nil, fmt.Errorf("publication key seal: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &Keys{store: st, box: box, proofs: newProofCache(proofCacheSize), now: now, rings: map[string]*keyRing{}}, nil
}

// ring returns the account's keys, making the first one when it has
// none, or a new one when none of its keys can be unsealed (the secret
// key was changed). store.ErrNotFound: no such account.
func (k *Keys) ring(ctx context.Context, accountID string) (*keyRing, error) {
	k.mu.Lock()
	r := k.rings[accountID]
	k.mu.Unlock()
	if r != nil && k.now().Sub(r.loaded) < keysFor {
		return r, nil
	}
	stored, err := k.store.PublicationKeys(ctx, accountID)
	if err != nil {
		return nil, err
	}
	r = k.build(stored)
	if r.signer == nil {
		stored, err = k.store.AddPublicationKey(ctx, accountID, func(existing []reviewdb.PublicationKey) (*reviewdb.PublicationKey, error) {
			if k.build(existing).signer != nil {
				return nil, nil // another replica made one meanwhile
			}
			return k.generate(accountID)
		})
		if err != nil {
			return nil, fmt.Errorf("make publication key: %w", err)
		}
		if r = k.build(stored); r.signer == nil {
			return nil, errors.New("the new publication key cannot be unsealed")
		}
	}
	k.mu.Lock()
	if len(k.rings) >= maxCachedAccounts {
		k.rings = map[string]*keyRing{}
	}
	k.rings[accountID] = r
	k.mu.Unlock()
	return r, nil
}

// build makes a ring of stored keys (newest first): all are published,
// the newest that unseals signs.
func (k *Keys) build(stored []reviewdb.PublicationKey) *keyRing {
	r := &keyRing{loaded: k.now(), jwks: jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}}
	for _, sk := range stored {
		var pub jose.JSONWebKey
		if err := json.Unmarshal([]byte(sk.PublicJWK), &pub); err != nil {
			continue // cannot happen: we stored it
		}
		r.jwks.Keys = append(r.jwks.Keys, pub)
		if r.signer == nil {
			if s, err := k.unseal(sk); err == nil {
				r.signer, r.kid = s, sk.KID
			}
		}
	}
	return r
}

// Rotate makes a new publication key for the account, which signs from
// now on (on other replicas within keysFor); the older keys stay
// published. It returns the new kid.
func (k *Keys) Rotate(ctx context.Context, accountID string) (string, error) {
	var kid string
	stored, err := k.store.AddPublicationKey(ctx, accountID, func([]reviewdb.PublicationKey) (*reviewdb.PublicationKey, error) {
		nk, err := k.generate(accountID)
		if nk != nil {
			kid = nk.KID
		}
		return nk, err
	})
	if err != nil {
		return "", fmt.Errorf("rotate publication key: %w", err)
	}
	r := k.build(stored)
	k.mu.Lock()
	k.rings[accountID] = r
	k.mu.Unlock()
	return kid, nil
}

// JWKS is the account's public keys, newest first: every key it ever had.
func (k *Keys) JWKS(ctx context.Context, accountID string) (jose.JSONWebKeySet, error) {
	r, err := k.ring(ctx, accountID)
	if err != nil {
		return jose.JSONWebKeySet{}, err
	}
	return r.jwks, nil
}

// generate makes a new Ed25519 key sealed for storage (sealedjwk).
func (k *Keys) generate(accountID string) (*reviewdb.PublicationKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	made, err := sealedjwk.Make(k.box, priv, string(Algorithm), func(kid string) []byte { return sealLabel(accountID, kid) })
	if err != nil {
		return nil, err
	}
	return &reviewdb.PublicationKey{KID: made.KID, AccountID: accountID, Algorithm: string(Algorithm), PrivateKey: made.Sealed,
		PublicJWK: made.PublicJWK, CreatedAt: k.now().UTC()}, nil
}

// sealLabel binds a sealed key to its account and kid: it cannot be moved
// to another row.
func sealLabel(accountID, kid string) []byte { return []byte(accountID + "/" + kid) }

// unseal turns a stored key into a signer.
func (k *Keys) unseal(sk reviewdb.PublicationKey) (jose.Signer, error) {
	return sealedjwk.Signer(k.box, sk.PrivateKey, sealLabel(sk.AccountID, sk.KID), sk.Algorithm, sk.KID,
		(&jose.SignerOptions{}).WithType(ProofType))
}
