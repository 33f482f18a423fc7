package authserver

import (
	"net/netip"
	"time"

	"github.com/touchpoint/touchpoint/internal/clientip"
	"github.com/touchpoint/touchpoint/internal/ratelimit"
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
// block one host usually holds. Both tables are bounded LRUs
// (internal/ratelimit): a flood of new keys evicts the buckets that failed
// least recently (most likely refilled, which carry no state) instead of
// growing or starting over, and only well-formed client ids become keys at
// all.
type failureLimits struct {
	byPair *ratelimit.Limiter[pairKey]
	byAddr *ratelimit.Limiter[netip.Addr]
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
	return &failureLimits{
		byPair: ratelimit.New[pairKey](1/pairRefill.Seconds(), pairBurst, capacity),
		byAddr: ratelimit.New[netip.Addr](1/addrRefill.Seconds(), addrBurst, capacity),
	}
}

// wait returns how long an attempt of clientID ("" when the id is not
// well-formed) from addr must wait; 0 means go on. Asking is not failing:
// it neither takes a token nor makes a bucket recent.
func (f *failureLimits) wait(clientID string, addr netip.Addr, now time.Time) time.Duration {
	addr = clientip.Group(addr)
	w := f.byAddr.Wait(addr, now)
	if clientID != "" {
		w = max(w, f.byPair.Wait(pairKey{clientID, addr}, now))
	}
	return w
}

// fail takes a token from the address's bucket and, for a well-formed
// client id, from the pair's.
func (f *failureLimits) fail(clientID string, addr netip.Addr, now time.Time) {
	addr = clientip.Group(addr)
	f.byAddr.Allow(addr, now)
	if clientID != "" {
		f.byPair.Allow(pairKey{clientID, addr}, now)
	}
}

// sizes reports how many buckets each table holds (tests).
func (f *failureLimits) sizes() (pairs, addrs int) {
	return f.byPair.Len(), f.byAddr.Len()
}
