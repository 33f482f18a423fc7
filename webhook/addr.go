package webhook

import "net/netip"

// nonPublic names the kind of a non-public address, or returns "" for a
// public one. It is the one rule behind both ValidateURL's literal-IP check
// and the dial-time check.
//
// IPv4 addresses written inside IPv6 (::ffff:a.b.c.d, NAT64 64:ff9b::/96,
// 6to4 2002::/16) are judged by the IPv4 address they lead to, since that
// is where a packet could end up.
func nonPublic(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && isZero(b[4:12]): // 64:ff9b::/96
			if kind := nonPublic(netip.AddrFrom4([4]byte(b[12:16]))); kind != "" {
				return kind + " (via NAT64)"
			}
		case b[0] == 0x20 && b[1] == 0x02: // 2002::/16
			if kind := nonPublic(netip.AddrFrom4([4]byte(b[2:6]))); kind != "" {
				return kind + " (via 6to4)"
			}
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

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
