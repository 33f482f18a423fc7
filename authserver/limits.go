package authserver

import (
	"container/list"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// failureLimits rate-limits failed client authentications with token
// buckets that only failures drain, in process (per auth replica):
//
//   - per (client id, client address): 10 failures, then one per 6 s.
//     Someone guessing a client's secret from one address is slowed; the
//     client itself, at any other address, is not — so knowing a client
//     id is not enough to lock its owner out.
//   - per client address: 30 failures, then one per 2 s, whatever the
//     client id: an address spraying many ids is slowed.
//
// The client address is the peer, or what trusted proxies recorded in
// X-Forwarded-For (clientip); IPv6 addresses count by their /64, the
// block one host usually holds. Both tables are bounded LRUs: a flood of
// new keys evicts the buckets that failed least recently (most likely
// refilled, which carry no state) instead of growing or starting over,
// and only well-formed client ids become keys at all.
type failureLimits struct {
	mu     sync.Mutex
	byPair *lru[pairKey]
	byAddr *lru[netip.Addr]
}

type pairKey struct {
	clientID string
	addr     netip.Addr
}

const (
	pairBurst       = 10
	pairRefill      = 6 * time.Second // 10 failures a minute per client and address
	addrBurst       = 30
	addrRefill      = 2 * time.Second // 30 failures a minute per address
	maxLimitEntries = 100_000         // per table
)

func newFailureLimits(capacity int) *failureLimits {
	return &failureLimits{byPair: newLRU[pairKey](capacity), byAddr: newLRU[netip.Addr](capacity)}
}

// bucketAddr is the address a limit counts: IPv6 by its /64.
func bucketAddr(a netip.Addr) netip.Addr {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// wait returns how long an attempt of clientID ("" when the id is not
// well-formed) from addr must wait; 0 means go on.
func (f *failureLimits) wait(clientID string, addr netip.Addr, now time.Time) time.Duration {
	addr = bucketAddr(addr)
	f.mu.Lock()
	defer f.mu.Unlock()
	w := waitFor(f.byAddr.peek(addr), now)
	if clientID != "" {
		w = max(w, waitFor(f.byPair.peek(pairKey{clientID, addr}), now))
	}
	return w
}

func waitFor(l *rate.Limiter, now time.Time) time.Duration {
	if l == nil {
		return 0
	}
	if missing := 1 - l.TokensAt(now); missing > 0 {
		return time.Duration(missing / float64(l.Limit()) * float64(time.Second))
	}
	return 0
}

// fail takes a token from the address's bucket and, for a well-formed
// client id, from the pair's.
func (f *failureLimits) fail(clientID string, addr netip.Addr, now time.Time) {
	addr = bucketAddr(addr)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.byAddr.touch(addr, addrRefill, addrBurst).AllowN(now, 1)
	if clientID != "" {
		f.byPair.touch(pairKey{clientID, addr}, pairRefill, pairBurst).AllowN(now, 1)
	}
}

// sizes reports how many buckets each table holds (tests).
func (f *failureLimits) sizes() (pairs, addrs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byPair.len(), f.byAddr.len()
}

// lru is a bounded table of token buckets, least recently touched first
// out. It is not safe for concurrent use; failureLimits locks it.
type lru[K comparable] struct {
	capacity int
	order    *list.List // of *lruEntry[K], most recent at the front
	byKey    map[K]*list.Element
}

type lruEntry[K comparable] struct {
	key K
	lim *rate.Limiter
}

func newLRU[K comparable](capacity int) *lru[K] {
	return &lru[K]{capacity: max(capacity, 1), order: list.New(), byKey: map[K]*list.Element{}}
}

// peek returns the bucket of key, or nil, without making it recent: a
// blocked attempt is not a failure.
func (c *lru[K]) peek(key K) *rate.Limiter {
	if e, ok := c.byKey[key]; ok {
		return e.Value.(*lruEntry[K]).lim
	}
	return nil
}

// touch returns the bucket of key, made most recent, creating it (and
// evicting the least recent one when full) if needed.
func (c *lru[K]) touch(key K, every time.Duration, burst int) *rate.Limiter {
	if e, ok := c.byKey[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruEntry[K]).lim
	}
	if c.order.Len() >= c.capacity {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.byKey, oldest.Value.(*lruEntry[K]).key)
	}
	l := rate.NewLimiter(rate.Every(every), burst)
	c.byKey[key] = c.order.PushFront(&lruEntry[K]{key: key, lim: l})
	return l
}

func (c *lru[K]) len() int { return c.order.Len() }
