package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
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

// keySet is the oidc.KeySet of one issuer: the JWKS cached in memory.
//
// It is refetched on a period (refresh, at most 5 minutes; sooner when
// the issuer's Cache-Control max-age or Expires says so, but never more
// often than minGap), so a key the issuer withdrew — after a compromise —
// stops verifying within one period: run does that. It is also refetched
// when a token names an unknown kid — at most once per minGap, so forged
// kids cannot make us hammer the issuer.
type keySet struct {
	url     string
	client  *http.Client
	now     func() time.Time
	minGap  time.Duration
	refresh time.Duration

	fetchMu sync.Mutex    // one fetch at a time; waiters then reuse its keys
	fetched time.Time     // last fetch attempt, guarded by fetchMu
	fresh   time.Duration // how long the last fetched set is fresh, guarded by fetchMu
	mu      sync.RWMutex
	keys    []jose.JSONWebKey
}

// has reports whether the set still holds a key with this kid ("" for a
// token without one: any key).
func (k *keySet) has(kid string) bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if kid == "" {
		return len(k.keys) > 0
	}
	for _, key := range k.keys {
		if key.KeyID == kid {
			return true
		}
	}
	return false
}

// run refetches the set whenever it goes stale until ctx ends. A failed
// fetch keeps the keys it has (the issuer may only be restarting) and is
// tried again after minGap, then less often, up to the refresh period.
func (k *keySet) run(ctx context.Context, log func(err error)) {
	wait := k.freshFor()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if err := k.update(ctx, true); err != nil {
			if ctx.Err() != nil {
				return
			}
			log(err)
			wait = min(max(2*wait, k.minGap), k.refresh)
			continue
		}
		wait = k.freshFor()
	}
}

// freshFor is how long the keys last fetched stay fresh.
func (k *keySet) freshFor() time.Duration {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	return k.fresh
}

// freshness is how long a JWKS answer may be kept: its Cache-Control
// max-age (less its Age) or, without one, its Expires; no-cache or
// no-store mean at once. The result is kept within [minGap, refresh]: a
// header can make us refetch sooner than the period, never later, and
// never hammer the issuer.
func freshness(h http.Header, now time.Time, minGap, refresh time.Duration) time.Duration {
	d, ok := headerFreshness(h, now)
	if !ok {
		return refresh
	}
	return min(max(d, minGap), refresh)
}

func headerFreshness(h http.Header, now time.Time) (time.Duration, bool) {
	for _, directive := range strings.Split(strings.Join(h.Values("Cache-Control"), ","), ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(directive), "=")
		switch strings.ToLower(name) {
		case "no-cache", "no-store":
			return 0, true
		case "max-age":
			secs, err := strconv.ParseInt(strings.Trim(value, `"`), 10, 64)
			if err != nil || secs < 0 {
				return 0, true // unreadable: treat as stale (RFC 9111 §4.2.1)
			}
			d := time.Duration(min(secs, int64(24*time.Hour/time.Second))) * time.Second
			if age, err := strconv.ParseInt(h.Get("Age"), 10, 64); err == nil && age > 0 {
				d -= time.Duration(age) * time.Second
			}
			return max(d, 0), true
		}
	}
	if v := h.Get("Expires"); v != "" {
		exp, err := http.ParseTime(v)
		if err != nil {
			return 0, true // an invalid Expires means already expired
		}
		if date, err := http.ParseTime(h.Get("Date")); err == nil {
			now = date // compare with the issuer's own clock
		}
		return max(exp.Sub(now), 0), true
	}
	return 0, false
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
	refreshErr := k.update(ctx, false)
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

// update refetches the JWKS unless the last attempt (successful or not)
// was less than minGap ago; force skips that check (first fetch, and the
// periodic refresh).
func (k *keySet) update(ctx context.Context, force bool) error {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	now := k.now()
	if !force && !k.fetched.IsZero() && now.Sub(k.fetched) < k.minGap {
		return errTooSoon
	}
	k.fetched = now
	// One caller's cancelled request must not abort the fetch the others
	// wait for; the client's timeout bounds it.
	keys, header, err := k.fetch(context.WithoutCancel(ctx))
	if err != nil {
		return fmt.Errorf("%w: fetch keys: %v", ErrUnavailable, err)
	}
	k.fresh = freshness(header, now, k.minGap, k.refresh)
	k.mu.Lock()
	k.keys = keys
	k.mu.Unlock()
	return nil
}

// fetch reads the JWKS, keeping only public asymmetric signing keys and
// skipping members it cannot use (as RFC 7517 §5 asks).
func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("%s answered %s", k.url, resp.Status)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, nil, fmt.Errorf("decode %s: %w", k.url, err)
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
		return nil, nil, fmt.Errorf("%s holds no usable signing key", k.url)
	}
	return keys, resp.Header, nil
}
