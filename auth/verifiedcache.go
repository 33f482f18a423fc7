package auth

import (
	"crypto/sha256"
	"errors"
	"sync"
	"time"
)

// Checking a token's signature and claims is most of the CPU a request
// costs the API, and a client sends the same token for minutes. So a
// token that passed is remembered, by its SHA-256, for at most
// verifiedCacheTTL and never past its exp; what can change while a token
// is valid — its client, revocation, the idle rule — is still checked on
// every request, and so is its signing key's presence in the issuer's key
// set: a key withdrawn from the JWKS stops working for the tokens it
// signed at the next refresh of the set, cached or not.
const (
	verifiedCacheTTL  = time.Minute
	verifiedCacheSize = 10000
)

var errNotCached = errors.New("token not in the cache")

type verifiedCache struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]cachedToken
}

type cachedToken struct {
	tok   verifiedToken
	until time.Time
}

// get returns the remembered verification of raw, or errNotCached.
func (c *verifiedCache) get(raw string, now time.Time) (verifiedToken, error) {
	key := sha256.Sum256([]byte(raw))
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || !now.Before(e.until) {
		return verifiedToken{}, errNotCached
	}
	return e.tok, nil
}

// put remembers a verified token. When the cache is full, expired
// entries go first, and everything if that frees nothing.
func (c *verifiedCache) put(raw string, tok verifiedToken, now time.Time) {
	until := now.Add(verifiedCacheTTL)
	if tok.exp.Before(until) {
		until = tok.exp
	}
	key := sha256.Sum256([]byte(raw))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[sha256.Size]byte]cachedToken{}
	}
	if len(c.m) >= verifiedCacheSize {
		for k, e := range c.m {
			if !now.Before(e.until) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= verifiedCacheSize {
			clear(c.m)
		}
	}
	c.m[key] = cachedToken{tok: tok, until: until}
}
