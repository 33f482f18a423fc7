package ratelimit

import (
	"net/http"
	"net/netip"
	"time"

	"github.com/touchpoint/touchpoint/internal/clientip"
)

// AddressEntries is the capacity of a ByAddress table. Client addresses
// are anyone's, so the bound is what keeps a flood of addresses from
// growing memory (about 100 bytes a slot).
const AddressEntries = 100_000

// ByAddress limits requests per client address — the peer's, or the one
// trusted proxies name in X-Forwarded-For (clientip, as the issuer reads
// it) — with IPv6 addresses counted by their /64.
type ByAddress struct {
	clients clientip.Resolver
	table   *Limiter[netip.Addr]
}

// NewByAddress is a limit of perSecond with burst per client address,
// behind the trusted proxies.
func NewByAddress(trusted []netip.Prefix, perSecond float64, burst int) *ByAddress {
	return &ByAddress{clients: clientip.New(trusted), table: New[netip.Addr](perSecond, burst, AddressEntries)}
}

// Allow takes a token of the request's client address.
func (a *ByAddress) Allow(r *http.Request, now time.Time) (ok bool, retryAfter time.Duration) {
	return a.table.Allow(clientip.Group(a.clients.Addr(r)), now)
}
