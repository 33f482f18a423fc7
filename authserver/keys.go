package authserver

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/touchpoint/touchpoint/internal/sealedjwk"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/authdb"
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
	kid        string
	created    time.Time
	activeFrom time.Time
	public     jose.JSONWebKey
	signer     jose.Signer
}

// keyRing is the in-memory copy of the signing_keys table.
type keyRing struct {
	signers   []*signingKey     // usable keys, newest first; the first active one signs
	published []jose.JSONWebKey // what the JWKS serves
	byKID     map[string]*signingKey
}

// current is the key that signs at now: the newest usable key whose
// activation time has come. Should none have come (a replica whose clock
// lags the one that made the only usable key), the one due first signs:
// refusing every token would be worse than signing a little early.
func (r keyRing) current(now time.Time) *signingKey {
	var soonest *signingKey
	for _, k := range r.signers {
		if !k.activeFrom.After(now) {
			return k
		}
		if soonest == nil || k.activeFrom.Before(soonest.activeFrom) {
			soonest = k
		}
	}
	return soonest
}

// keys loads, creates, rotates and retires signing keys. Several auth
// replicas share the table: every change happens under an advisory lock
// after looking at what is stored, so they agree on the keys, and every
// replica reloads periodically to converge.
//
// A new key is published before it signs: it becomes active lead after
// its creation — longer than verifiers take to refetch the key set and
// replicas to reload it — so no verifier meets a kid it does not know.
// Only when no key can sign at all (the first start, a changed secret
// key, the signing key retired) does a new key sign at once.
type keys struct {
	store    Store
	box      *secretkey.Box // seals the private keys
	now      func() time.Time
	rotation time.Duration
	lead     time.Duration
	// retain is how long a superseded key stays published after its
	// successor took over: the longest token lifetime plus the time
	// other replicas may still sign with it before they reload.
	retain time.Duration

	reload sync.Mutex // serialises loads
	mu     sync.RWMutex
	ring   keyRing
}

// KeyState is where a signing key stands in its life.
type KeyState string

// Key states, in the order a key passes them.
const (
	// KeyPending: published, signs from its ActiveFrom.
	KeyPending KeyState = "pending"
	// KeySigning: new tokens are signed with it.
	KeySigning KeyState = "signing"
	// KeyPublished: superseded, still published for the tokens it signed.
	KeyPublished KeyState = "published"
	// KeyExpired: superseded long enough ago that none of its tokens can
	// be valid; no longer published.
	KeyExpired KeyState = "expired"
	// KeyRetired: withdrawn by an operator; neither published nor
	// accepted, whatever its age.
	KeyRetired KeyState = "retired"
)

// KeyInfo describes one signing key (touchpoint keys list).
type KeyInfo struct {
	KID        string     `json:"kid"`
	Algorithm  string     `json:"alg"`
	State      KeyState   `json:"state"`
	CreatedAt  time.Time  `json:"createdAt"`
	ActiveFrom time.Time  `json:"activeFrom"`
	RetiredAt  *time.Time `json:"retiredAt,omitempty"`
	// Usable is false for a key sealed under another TOUCHPOINT_SECRET_KEY:
	// this process publishes it but cannot sign with it.
	Usable bool `json:"usable"`
}

// states says where each stored key (newest first) stands at now, given
// which ones this process can unseal.
func (k *keys) states(stored []authdb.SigningKey, usable func(kid string) bool, now time.Time) []KeyState {
	out := make([]KeyState, len(stored))
	signing := false
	var takeover time.Time // when the next newer key became active; zero while none
	for i, sk := range stored {
		switch {
		case sk.RetiredAt != nil:
			out[i] = KeyRetired
			continue
		case sk.ActiveFrom.After(now):
			out[i] = KeyPending
			continue
		case !signing && usable(sk.KID):
			out[i], signing = KeySigning, true
		case !takeover.IsZero() && now.Sub(takeover) > k.retain:
			out[i] = KeyExpired
		default:
			// Superseded, or another secret key's replica signs with it.
			out[i] = KeyPublished
		}
		takeover = sk.ActiveFrom
	}
	return out
}

// ensure creates a key when there is no usable key younger than the
// rotation age, or always when force is set (Rotate). It returns the new
// key's kid, or "".
func (k *keys) ensure(ctx context.Context, force bool) (string, error) {
	var kid string
	_, err := k.store.EditSigningKeys(ctx, func(existing []authdb.SigningKey) ([]authdb.SigningKey, error) {
		// Read under the lock: a key another replica made while we waited
		// for it must not look as if it were from the future.
		now := k.now()
		active, fresh := false, false
		for _, sk := range existing {
			if sk.RetiredAt != nil {
				continue
			}
			if _, err := k.unseal(sk); err != nil {
				continue
			}
			if !sk.ActiveFrom.After(now) {
				active = true
			}
			if now.Sub(sk.CreatedAt) < k.rotation {
				fresh = true // a young key signs or will soon
			}
		}
		if active && fresh && !force {
			return nil, nil
		}
		created := newest(existing, now)
		activeFrom := created.Add(k.lead)
		if !active {
			activeFrom = now // nothing can sign: no time to publish first
		}
		nk, err := k.generate(created, activeFrom)
		if err != nil {
			return nil, err
		}
		kid = nk.KID
		return []authdb.SigningKey{*nk}, nil
	})
	if err != nil {
		return "", fmt.Errorf("ensure signing key: %w", err)
	}
	return kid, nil
}

// newest is a creation time that sorts first among existing keys even
// when the clock has not moved (or lags another replica's): stored times
// are µs.
func newest(existing []authdb.SigningKey, now time.Time) time.Time {
	if len(existing) > 0 && !now.After(existing[0].CreatedAt) {
		return existing[0].CreatedAt.Add(time.Microsecond)
	}
	return now
}

// retire withdraws the key kid. When it is the key signing now, the
// newest pending key takes over at once, or a new key is made that does:
// a withdrawn key must not sign another token.
func (k *keys) retire(ctx context.Context, kid string) error {
	_, err := k.store.EditSigningKeys(ctx, func(existing []authdb.SigningKey) ([]authdb.SigningKey, error) {
		now := k.now()
		i := slices.IndexFunc(existing, func(sk authdb.SigningKey) bool { return sk.KID == kid })
		if i < 0 {
			return nil, fmt.Errorf("signing key %q: %w", kid, store.ErrNotFound)
		}
		if existing[i].RetiredAt != nil {
			return nil, nil // retired already
		}
		usable := func(kid string) bool {
			j := slices.IndexFunc(existing, func(sk authdb.SigningKey) bool { return sk.KID == kid })
			_, err := k.unseal(existing[j])
			return err == nil
		}
		states := k.states(existing, usable, now)
		target := existing[i]
		target.RetiredAt = &now
		writes := []authdb.SigningKey{target}
		if states[i] != KeySigning {
			return writes, nil
		}
		for j, sk := range existing {
			if states[j] == KeyPending && usable(sk.KID) {
				sk.ActiveFrom = now
				return append(writes, sk), nil
			}
		}
		nk, err := k.generate(newest(existing, now), now)
		if err != nil {
			return nil, err
		}
		return append(writes, *nk), nil
	})
	if err != nil {
		return fmt.Errorf("retire signing key: %w", err)
	}
	return nil
}

// generate makes a new RSA key sealed for storage (sealedjwk).
func (k *keys) generate(now, activeFrom time.Time) (*authdb.SigningKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, rsaBits)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	made, err := sealedjwk.Make(k.box, priv, string(Algorithm), sealLabel)
	if err != nil {
		return nil, err
	}
	return &authdb.SigningKey{KID: made.KID, Algorithm: string(Algorithm), PrivateKey: made.Sealed,
		PublicJWK: made.PublicJWK, CreatedAt: now.UTC(), ActiveFrom: activeFrom.UTC()}, nil
}

// sealLabel binds a sealed key to its kid: it cannot be moved to another
// row.
func sealLabel(kid string) []byte { return []byte(kid) }

// unseal turns a stored key into a signer.
func (k *keys) unseal(sk authdb.SigningKey) (jose.Signer, error) {
	return sealedjwk.Signer(k.box, sk.PrivateKey, sealLabel(sk.KID), sk.Algorithm, sk.KID,
		(&jose.SignerOptions{}).WithType("at+jwt"))
}

// load reads every key from the database and rebuilds the ring, keeping
// already unsealed keys. Retired and expired keys are left out.
func (k *keys) load(ctx context.Context) error {
	_, err := k.loadInfo(ctx)
	return err
}

// loadInfo is load, also returning what it found about every key.
func (k *keys) loadInfo(ctx context.Context) ([]KeyInfo, error) {
	k.reload.Lock()
	defer k.reload.Unlock()
	stored, err := k.store.SigningKeys(ctx)
	if err != nil {
		return nil, err
	}
	old := k.snapshot()
	ring := keyRing{byKID: make(map[string]*signingKey, len(stored))}
	loaded := make(map[string]*signingKey, len(stored))
	for _, sk := range stored {
		if sk.RetiredAt != nil {
			continue // never unsealed again
		}
		key := old.byKID[sk.KID]
		if key == nil {
			key = &signingKey{kid: sk.KID, created: sk.CreatedAt}
			if err := json.Unmarshal([]byte(sk.PublicJWK), &key.public); err != nil {
				return nil, fmt.Errorf("signing key %s: public jwk: %w", sk.KID, err)
			}
			key.signer, _ = k.unseal(sk) // an unusable key is published, not used
		}
		if !key.activeFrom.Equal(sk.ActiveFrom) {
			// New, or brought forward by a retirement. A copy: the old
			// ring's key may be in use by a concurrent request.
			c := *key
			c.activeFrom = sk.ActiveFrom
			key = &c
		}
		loaded[sk.KID] = key
	}
	now := k.now()
	states := k.states(stored, func(kid string) bool { return loaded[kid] != nil && loaded[kid].signer != nil }, now)
	info := make([]KeyInfo, len(stored))
	for i, sk := range stored {
		key := loaded[sk.KID]
		info[i] = KeyInfo{KID: sk.KID, Algorithm: sk.Algorithm, State: states[i], CreatedAt: sk.CreatedAt,
			ActiveFrom: sk.ActiveFrom, RetiredAt: sk.RetiredAt, Usable: key != nil && key.signer != nil}
		switch states[i] {
		case KeyRetired, KeyExpired:
			continue
		}
		ring.byKID[sk.KID] = key
		ring.published = append(ring.published, key.public)
		if key.signer != nil {
			ring.signers = append(ring.signers, key)
		}
	}
	if ring.current(now) == nil {
		return info, errors.New("no usable signing key")
	}
	k.mu.Lock()
	k.ring = ring
	k.mu.Unlock()
	return info, nil
}

func (k *keys) snapshot() keyRing {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.ring
}
