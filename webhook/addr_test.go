package webhook

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNonPublic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip   string
		want string // "" for public
	}{
		{"8.8.8.8", ""},
		{"93.184.215.14", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},
		{"198.17.255.255", ""},
		{"198.20.0.0", ""},
		{"223.255.255.255", ""},
		{"2606:4700:4700::1111", ""},
		{"2a00:1450:4001:80b::200e", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", ""},  // 6to4 of 8.8.8.8

		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"10.0.0.1", "private"},
		{"10.255.255.255", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.0.1", "private"},
		{"fc00::1", "private"},
		{"fdff:ffff::1", "private"},
		{"169.254.0.1", "link-local"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"febf::1", "link-local"},
		{"fec0::1", "site-local"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"ff0e::1", "multicast"},
		{"100.64.0.0", "shared (CGNAT)"},
		{"100.127.255.255", "shared (CGNAT)"},
		{"192.0.0.170", "reserved"},
		{"198.18.0.1", "benchmarking"},
		{"198.19.255.255", "benchmarking"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "reserved"},

		// IPv4 written inside IPv6 is judged by the IPv4 address.
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:169.254.169.254", "link-local"},
		{"::ffff:100.64.0.1", "shared (CGNAT)"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"64:ff9b::7f00:1", "loopback (via NAT64)"},
		{"64:ff9b::a9fe:a9fe", "link-local (via NAT64)"},
		{"2002:a00:1::", "private (via 6to4)"},
		{"2002:7f00:1::", "loopback (via 6to4)"},
		{"::7f00:1", "IPv4-compatible"},
		{"::a00:1", "IPv4-compatible"},
		{"fe80::1%eth0", "link-local"},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, nonPublic(netip.MustParseAddr(tt.ip)))
		})
	}
	assert.Equal(t, "invalid", nonPublic(netip.Addr{}))
}

func TestRefuseNonPublic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		network, address string
		refused          bool
	}{
		{"tcp4", "93.184.215.14:443", false},
		{"tcp6", "[2606:4700:4700::1111]:443", false},
		{"tcp4", "10.0.0.1:443", true},
		{"tcp4", "169.254.169.254:80", true},
		{"tcp6", "[::1]:443", true},
		{"tcp6", "[::ffff:127.0.0.1]:443", true},
		{"tcp6", "[fe80::1%eth0]:443", true},
		{"udp4", "93.184.215.14:53", true},
		{"tcp4", "not-an-address", true},
	}
	for _, tt := range tests {
		t.Run(tt.network+" "+tt.address, func(t *testing.T) {
			t.Parallel()
			err := refuseNonPublic(tt.network, tt.address, nil)
			if tt.refused {
				assert.IsType(t, &refusedError{}, err)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}
