package clientip_test

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/internal/clientip"
)

func TestAddr(t *testing.T) {
	t.Parallel()
	proxies := clientip.New([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")})
	for name, tc := range map[string]struct {
		res    clientip.Resolver
		remote string
		xff    []string
		want   string
	}{
		"no proxies: the peer":                     {clientip.Resolver{}, "203.0.113.9:5000", []string{"198.51.100.1"}, "203.0.113.9"},
		"untrusted peer: header ignored":           {proxies, "203.0.113.9:5000", []string{"198.51.100.1"}, "203.0.113.9"},
		"trusted peer: the hop before it":          {proxies, "10.1.2.3:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		"client-written entries on the left":       {proxies, "10.1.2.3:5000", []string{"1.1.1.1, 198.51.100.1"}, "198.51.100.1"},
		"a chain of trusted proxies":               {proxies, "10.1.2.3:5000", []string{"198.51.100.1, 10.9.9.9", "10.4.4.4"}, "198.51.100.1"},
		"IPv6 peer and client":                     {proxies, "[fd00::1]:443", []string{"2001:db8::7"}, "2001:db8::7"},
		"IPv4-mapped client":                       {proxies, "10.1.2.3:5000", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		"a port in the header":                     {proxies, "10.1.2.3:5000", []string{"198.51.100.1:1234"}, "198.51.100.1"},
		"garbage stops the walk":                   {proxies, "10.1.2.3:5000", []string{"198.51.100.1, not-an-ip, 10.9.9.9"}, "10.9.9.9"},
		"only trusted hops: the leftmost":          {proxies, "10.1.2.3:5000", []string{"10.7.7.7"}, "10.7.7.7"},
		"trusted peer without header: the peer":    {proxies, "10.1.2.3:5000", nil, "10.1.2.3"},
		"spoofed header from an untrusted IPv6":    {proxies, "[2001:db8::1]:5000", []string{"10.0.0.1"}, "2001:db8::1"},
		"trusted peer, empty header: garbage ends": {proxies, "10.1.2.3:5000", []string{""}, "10.1.2.3"},
		"IPv4-mapped trusted peer":                 {proxies, "[::ffff:10.1.2.3]:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		"unreadable peer":                          {proxies, "somewhere", nil, "invalid IP"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			assert.Equal(t, tc.want, tc.res.Addr(r).String())
		})
	}
}

func TestGroup(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"198.51.100.7":              "198.51.100.7",
		"::ffff:198.51.100.7":       "198.51.100.7",
		"2001:db8:1:2:3:4:5:6":      "2001:db8:1:2::",
		"2001:db8:1:2:ffff:ffff::1": "2001:db8:1:2::",
		"2001:db8:1:3::1":           "2001:db8:1:3::",
		"::1":                       "::",
	} {
		assert.Equal(t, want, clientip.Group(netip.MustParseAddr(in)).String(), in)
	}
}
