package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// allowedAlgs are the asymmetric JWS algorithms accepted: never HS* (a
// public key must not double as an HMAC secret) and never none.
var allowedAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

func allowedAlgNames() []string {
	names := make([]string, len(allowedAlgs))
	for i, a := range allowedAlgs {
		names[i] = string(a)
	}
	return names
}

// keySet is the oidc.KeySet of one issuer: the JWKS cached in memory and
// refetched when a token names an unknown kid — at most once per minGap,
// so forged kids cannot make us hammer the issuer.
type keySet struct {
	url    string
	client *http.Client
	now    func() time.Time
	minGap time.Duration

	fetchMu sync.Mutex // one fetch at a time; waiters then reuse its keys
	fetched time.Time  // last fetch attempt, guarded by fetchMu
	mu      sync.RWMutex
	keys    []jose.JSONWebKey
}

// sigErrKey carries a *error through go-oidc, which flattens the errors
// of VerifySignature into text: Authenticate reads the original back to
// tell an unavailable issuer from a bad token.
type sigErrKey struct{}

// VerifySignature implements oidc.KeySet.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	payload, err := k.verifySignature(ctx, raw)
	if err != nil {
		if slot, ok := ctx.Value(sigErrKey{}).(*error); ok {
			*slot = err
		}
	}
	return payload, err
}

func (k *keySet) verifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(raw, allowedAlgs)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, invalid("malformed token or disallowed algorithm")
	}
	if payload, known, err := k.verify(jws); known {
		return payload, err
	}
	// No key with this kid: the issuer may have rotated.
	refreshErr := k.refresh(ctx, false)
	if payload, known, err := k.verify(jws); known {
		return payload, err
	}
	if refreshErr != nil && refreshErr != errTooSoon {
		return nil, refreshErr
	}
	return nil, invalid("unknown signing key")
}

// verify checks the signature with the cached keys matching the kid;
// known is false when no key matches.
func (k *keySet) verify(jws *jose.JSONWebSignature) (payload []byte, known bool, err error) {
	hdr := jws.Signatures[0].Header
	k.mu.RLock()
	keys := k.keys
	k.mu.RUnlock()
	for _, key := range keys {
		if hdr.KeyID != "" && key.KeyID != hdr.KeyID {
			continue
		}
		known = true
		if key.Algorithm != "" && key.Algorithm != hdr.Algorithm {
			continue // a key is only good for its own algorithm
		}
		if payload, err := jws.Verify(key.Key); err == nil {
			return payload, true, nil
		}
	}
	if known {
		return nil, true, invalid("bad signature")
	}
	return nil, false, nil
}

var errTooSoon = fmt.Errorf("%w: key refetch rate limited", ErrInvalidToken)

// refresh refetches the JWKS unless the last attempt (successful or not)
// was less than minGap ago; force skips that check (first fetch).
func (k *keySet) refresh(ctx context.Context, force bool) error {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	now := k.now()
	if !force && !k.fetched.IsZero() && now.Sub(k.fetched) < k.minGap {
		return errTooSoon
	}
	k.fetched = now
	// One caller's cancelled request must not abort the fetch the others
	// wait for; the client's timeout bounds it.
	keys, err := k.fetch(context.WithoutCancel(ctx))
	if err != nil {
		return fmt.Errorf("%w: fetch keys: %v", ErrUnavailable, err)
	}
	k.mu.Lock()
	k.keys = keys
	k.mu.Unlock()
	return nil
}

// fetch reads the JWKS, keeping only public asymmetric signing keys and
// skipping members it cannot use (as RFC 7517 §5 asks).
func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", k.url, resp.Status)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, fmt.Errorf("decode %s: %w", k.url, err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var meta struct {
			Kty string  `json:"kty"`
			Use string  `json:"use"`
			D   *string `json:"d"`
		}
		// Never parse private or symmetric material from the network.
		if json.Unmarshal(raw, &meta) != nil || meta.D != nil || meta.Kty == "oct" || meta.Use == "enc" {
			continue
		}
		var key jose.JSONWebKey
		if json.Unmarshal(raw, &key) != nil || !key.IsPublic() || !key.Valid() {
			continue
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s holds no usable signing key", k.url)
	}
	return keys, nil
}
