// Package clientip finds the address of the client behind an HTTP
// request: the peer's address, or — when the peer is one of the reverse
// proxies the operator trusts (TOUCHPOINT_TRUSTED_PROXIES) — the address
// those proxies recorded in X-Forwarded-For.
//
// X-Forwarded-For is read from the right: each trusted proxy appends the
// address it received the request from, so the rightmost entry that is
// not a trusted proxy is the client. Anything to its left was written by
// the client itself and is ignored; without trusted proxies the header is
// never read, so a client cannot choose the address it is limited by.
package clientip

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Resolver finds client addresses; its zero value trusts no proxy.
type Resolver struct {
	trusted []netip.Prefix
}

// New returns a Resolver that believes X-Forwarded-For from peers within
// trusted.
func New(trusted []netip.Prefix) Resolver {
	return Resolver{trusted: trusted}
}

// Addr returns the client's address, or the zero Addr when the peer's
// address cannot be read.
func (res Resolver) Addr(r *http.Request) netip.Addr {
	peer := parse(r.RemoteAddr)
	if !peer.IsValid() || !res.isTrusted(peer) {
		return peer
	}
	hops := r.Header.Values("X-Forwarded-For")
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		entries := strings.Split(hops[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			a := parse(strings.TrimSpace(entries[j]))
			if !a.IsValid() {
				// Garbage from the client's side: the hop before it is the
				// furthest one known.
				return client
			}
			client = a
			if !res.isTrusted(a) {
				return a
			}
		}
	}
	return client
}

func (res Resolver) isTrusted(a netip.Addr) bool {
	for _, p := range res.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parse reads an address with or without a port ("10.0.0.1",
// "10.0.0.1:4711", "[2001:db8::1]:443", "2001:db8::1"), unmapping
// IPv4-in-IPv6 addresses.
func parse(s string) netip.Addr {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone("")
	}
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		return netip.Addr{}
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}

// Group is the address a per-address limit counts: an IPv4 address
// itself, an IPv6 address by its /64 — the block one host (one home, one
// phone) usually holds, and can change addresses within at will.
func Group(a netip.Addr) netip.Addr {
	if a.Is6() && !a.Is4In6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a.Unmap()
}
