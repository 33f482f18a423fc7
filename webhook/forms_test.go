package webhook

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestEveryNonPublicForm holds every spelling of a non-public address that
// an endpoint URL could use to reach one under another name: IPv4 inside
// IPv6 (NAT64, local-use NAT64, IPv4-compatible, -mapped and -translated,
// 6to4, Teredo) and IPv4 in numeric spellings that resolvers accept. Each
// is refused when the API validates the URL (a 400) and again when a
// delivery would dial it: an IPv6 form by the dialer's check on the very
// address about to be connected — as a literal in the URL and as what a
// host name resolves to — and a numeric spelling before anything is
// resolved. The public counterparts pass validation, so the rule is the
// address led to, not the form.
func TestEveryNonPublicForm(t *testing.T) {
	t.Parallel()
	forms := []struct {
		name string
		host string // as in a URL
		kind string // the refusal; "" for a public address
	}{
		{"NAT64 of 127.0.0.1", "[64:ff9b::7f00:1]", "loopback (via NAT64)"},
		{"NAT64 of 169.254.169.254", "[64:ff9b::a9fe:a9fe]", "link-local (via NAT64)"},
		{"NAT64 of 10.0.0.1, dotted", "[64:ff9b::10.0.0.1]", "private (via NAT64)"},
		{"local-use NAT64", "[64:ff9b:1::808:808]", "local-use NAT64"},
		{"local-use NAT64, any suffix", "[64:ff9b:1:ffff::1]", "local-use NAT64"},
		{"IPv4-compatible 127.0.0.1", "[::7f00:1]", "IPv4-compatible"},
		{"IPv4-compatible 169.254.169.254", "[::169.254.169.254]", "IPv4-compatible"},
		{"IPv4-compatible of a public address", "[::808:808]", "IPv4-compatible"},
		{"IPv4-mapped 169.254.169.254", "[::ffff:a9fe:a9fe]", "link-local"},
		{"IPv4-mapped 127.0.0.1, dotted", "[::ffff:127.0.0.1]", "loopback"},
		{"IPv4-mapped, written out", "[0:0:0:0:0:ffff:a00:1]", "private"},
		{"IPv4-translated 169.254.169.254", "[::ffff:0:a9fe:a9fe]", "link-local (via IPv4-translated)"},
		{"IPv4-translated 127.0.0.1", "[::ffff:0:127.0.0.1]", "loopback (via IPv4-translated)"},
		{"6to4 of 169.254.169.254", "[2002:a9fe:a9fe::1]", "link-local (via 6to4)"},
		{"6to4 of 127.0.0.1", "[2002:7f00:1::]", "loopback (via 6to4)"},
		{"6to4 of 192.168.1.1", "[2002:c0a8:101:1::1]", "private (via 6to4)"},
		// Teredo: server 65.54.227.120, client the inverse of the last 32 bits.
		{"Teredo client 127.0.0.1", "[2001:0:4136:e378:8000:63bf:80ff:fffe]", "loopback (via Teredo)"},
		{"Teredo client 169.254.169.254", "[2001:0:4136:e378:8000:63bf:5601:5601]", "link-local (via Teredo)"},
		{"Teredo server 10.0.0.1", "[2001:0:a00:1::f7f7:f7f7]", "private (via Teredo server)"},
		{"decimal 127.0.0.1", "2130706433", "spelling"},
		{"decimal 169.254.169.254", "2852039166", "spelling"},
		{"octal", "0177.0.0.1", "spelling"},
		{"octal, one number", "017700000001", "spelling"},
		{"hexadecimal", "0x7f000001", "spelling"},
		{"hexadecimal, upper case", "0X7F000001", "spelling"},
		{"hexadecimal labels", "0x7f.0x0.0x0.0x1", "spelling"},
		{"short form", "127.1", "spelling"},
		{"short form, three labels", "10.0.1", "spelling"},
		{"a leading zero", "127.0.0.01", "spelling"},
		{"five numbers", "1.2.3.4.5", "spelling"},
		{"short form with a trailing dot", "127.1.", "spelling"},
		{"a name ending in a number", "hooks.example.123", "spelling"},
		{"dotted quad with a trailing dot", "127.0.0.1.", "spelling"},
		{"public dotted quad with a trailing dot", "93.184.215.14.", "spelling"},

		{"NAT64 of 8.8.8.8", "[64:ff9b::808:808]", ""},
		{"IPv4-translated 8.8.8.8", "[::ffff:0:808:808]", ""},
		{"IPv4-mapped 8.8.8.8", "[::ffff:808:808]", ""},
		{"6to4 of 8.8.8.8", "[2002:808:808::1]", ""},
		{"Teredo of public addresses", "[2001:0:4136:e378:8000:63bf:f7f7:f7f7]", ""},
		{"a name starting with a number", "123.example.com", ""},
		{"a name ending in letters that look hexadecimal", "hooks.example.cafe", ""},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			url := "https://" + f.host + "/hooks"
			err := ValidateURL(url, false)
			if f.kind == "" {
				assert.NoError(t, err, "a public address")
				return
			}
			if assert.Error(t, err, "validation") {
				assert.Contains(t, err.Error(), f.kind)
			}

			// At dial time: the URL as it is.
			c, log := newTestClient(t, Options{Timeout: 5 * time.Second})
			r := deliverWithin(t, c, Delivery{URL: url, MsgID: "msg-1", Body: []byte(`{}`), Secrets: []string{mustSecret(t)}}, 20*time.Second)
			assert.Equal(t, Failed, r.Outcome)
			assert.Zero(t, r.StatusCode)
			assert.Contains(t, r.Err, f.kind)
			seen, refused := log.snapshot()
			assert.Equal(t, refused, seen, "every address dialled was refused")
			if !strings.HasPrefix(f.host, "[") {
				assert.Empty(t, seen, "a numeric spelling is refused before anything is dialled")
				return
			}
			assert.Len(t, refused, 1)

			// At dial time: a host name that resolves to the address.
			ip := strings.Trim(f.host, "[]")
			c, log = newTestClient(t, Options{Timeout: 5 * time.Second, LookupIP: resolveTo(ip)})
			r = deliverWithin(t, c, Delivery{URL: "https://hooks.example.com/", MsgID: "msg-1", Body: []byte(`{}`),
				Secrets: []string{mustSecret(t)}}, 20*time.Second)
			assert.Equal(t, Failed, r.Outcome)
			assert.Equal(t, "the endpoint's host is not a public address ("+f.kind+"); deliveries to it are refused", r.Err)
			seen, refused = log.snapshot()
			assert.Equal(t, refused, seen, "every address dialled was refused")
			if assert.Len(t, refused, 1) {
				host, _, _ := net.SplitHostPort(refused[0])
				assert.NotEmpty(t, host)
			}
		})
	}
}
