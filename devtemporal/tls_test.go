package devtemporal

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNameToVerify: the server's own clients check the frontend's
// certificate against a name it holds.
func TestNameToVerify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		leaf x509.Certificate
		dial string
		want string // "" : an error
	}{
		{"covers the dialled IP", x509.Certificate{IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"temporal.test"}}, "127.0.0.1", "127.0.0.1"},
		{"DNS name only", x509.Certificate{DNSNames: []string{"temporal.test", "other.test"}}, "127.0.0.1", "temporal.test"},
		{"another IP only", x509.Certificate{IPAddresses: []net.IP{net.IPv4(10, 0, 0, 5)}}, "127.0.0.1", "10.0.0.5"},
		{"no name at all", x509.Certificate{}, "127.0.0.1", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := nameToVerify(&tc.leaf, tc.dial)
			if tc.want == "" {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestFrontendTLSNeedsACertificate(t *testing.T) {
	t.Parallel()
	_, err := newFrontendTLS(&TLS{Certificate: tls.Certificate{}}, "127.0.0.1")
	require.ErrorContains(t, err, "certificate and private key are required")
}
