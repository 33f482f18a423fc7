package webhook

import (
	"net/netip"
	"strings"
)

// nonPublic names the kind of a non-public address, or returns "" for a
// public one. It is the one rule behind both ValidateURL's literal-IP check
// and the dial-time check.
//
// IPv6 addresses that carry an IPv4 address on to IPv4 networks are judged
// by the IPv4 address they lead to, since that is where a packet could end
// up: IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d),
// NAT64 (64:ff9b::/96), 6to4 (2002::/16) and Teredo (2001::/32, both its
// server's and its client's address). The deprecated IPv4-compatible form
// (::a.b.c.d) and the local-use NAT64 prefix (64:ff9b:1::/48, which
// translates into whatever network the operator chose) are refused
// whatever they embed.
func nonPublic(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is6() {
		b := ip.As16()
		for _, e := range embeddedIPv4(b) {
			if kind := nonPublic(e.addr); kind != "" {
				return kind + " (via " + e.via + ")"
			}
		}
		switch {
		case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0x00 && b[5] == 0x01: // 64:ff9b:1::/48
			return "local-use NAT64"
		case isZero(b[:12]) && !ip.IsLoopback() && !ip.IsUnspecified(): // ::a.b.c.d, deprecated
			return "IPv4-compatible"
		case b[0] == 0xfe && b[1]&0xc0 == 0xc0: // fec0::/10
			return "site-local"
		}
	}
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast():
		return "multicast"
	}
	if ip.Is4() {
		a := ip.As4()
		switch {
		case a[0] == 0: // 0.0.0.0/8, "this network"
			return "unspecified"
		case a[0] == 100 && a[1]&0xc0 == 64: // 100.64.0.0/10
			return "shared (CGNAT)"
		case a[0] == 192 && a[1] == 0 && a[2] == 0: // 192.0.0.0/24
			return "reserved"
		case a[0] == 198 && a[1]&0xfe == 18: // 198.18.0.0/15
			return "benchmarking"
		case a[0] >= 240: // 240.0.0.0/4 and broadcast
			return "reserved"
		}
	}
	return ""
}

// embedded is an IPv4 address that an IPv6 address leads to.
type embedded struct {
	addr netip.Addr
	via  string // the mechanism, for the message
}

// embeddedIPv4 returns the IPv4 addresses that the IPv6 address b carries
// by a translation or tunnelling mechanism.
func embeddedIPv4(b [16]byte) []embedded {
	v4 := func(p []byte) netip.Addr { return netip.AddrFrom4([4]byte(p)) }
	switch {
	case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && isZero(b[4:12]): // 64:ff9b::/96, RFC 6052
		return []embedded{{v4(b[12:16]), "NAT64"}}
	case isZero(b[:8]) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0: // ::ffff:0:0/96, RFC 2765
		return []embedded{{v4(b[12:16]), "IPv4-translated"}}
	case b[0] == 0x20 && b[1] == 0x02: // 2002::/16, RFC 3056
		return []embedded{{v4(b[2:6]), "6to4"}}
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00: // 2001::/32, RFC 4380
		// The server's address as it is; the client's inverted.
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []embedded{{v4(b[4:8]), "Teredo server"}, {netip.AddrFrom4(client), "Teredo"}}
	}
	return nil
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// numericHost reports whether a URL's host is an IPv4 address by the
// rule browsers follow (the WHATWG URL standard): its last label, after a
// trailing dot, is a number — decimal, or hexadecimal after "0x". Such a
// host is not a name: resolvers read "2130706433", "0x7f000001",
// "0177.0.0.1" and "127.1" as 127.0.0.1. Only the usual spelling, four
// decimal numbers without leading zeros or a trailing dot, is accepted
// (ok); any other is refused, so no address passes the checks under a
// spelling they do not read as the resolver does.
func numericHost(host string) (numeric, ok bool) {
	if strings.Contains(host, ":") {
		return false, false // IPv6, whose last group may be dotted IPv4
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	if !isNumber(labels[len(labels)-1]) {
		return false, false
	}
	a, err := netip.ParseAddr(host)
	return true, err == nil && a.Is4()
}

// isNumber is the URL standard's "ends in a number" test of one label.
func isNumber(label string) bool {
	if label == "" {
		return false
	}
	digits, hex := label, false
	if len(label) >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X') {
		digits, hex = label[2:], true
	}
	for _, c := range digits {
		switch {
		case c >= '0' && c <= '9':
		case hex && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'):
		default:
			return false
		}
	}
	return true
}
