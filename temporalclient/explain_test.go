package temporalclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/touchpoint/touchpoint/internal/freeport"
)

func TestDiagnose(t *testing.T) {
	t.Parallel()
	const addr = "temporal.internal:7233"
	plain := setup{address: addr}
	tlsOnly := setup{address: addr, tls: &tls.Config{}}
	withCA := setup{address: addr, tls: &tls.Config{}, serverCA: true}
	withCert := setup{address: addr, tls: &tls.Config{}, clientCert: true}
	cases := []struct {
		name  string
		setup setup
		msg   string
		want  string // "" : not explained
	}{
		{"TLS 1.3 alert, no certificate", tlsOnly, "error reading server preface: remote error: tls: certificate required",
			"refused the connection during the TLS handshake: the server requires a client certificate (set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)"},
		{"TLS 1.2 alert, no certificate", tlsOnly, "authentication handshake failed: remote error: tls: bad certificate",
			"the server requires a client certificate"},
		{"TLS 1.2 alert, certificate sent", withCert, "authentication handshake failed: remote error: tls: bad certificate",
			"the server did not accept the client certificate"},
		{"certificate not offered for the server's CAs", withCert, "remote error: tls: certificate required",
			"the server did not accept the client certificate"},
		{"expired client certificate", withCert, "remote error: tls: certificate expired", "the server did not accept the client certificate"},
		{"unknown server CA", tlsOnly, "tls: failed to verify certificate: x509: certificate signed by unknown authority",
			"was not trusted during the TLS handshake: the server's certificate is not signed by a trusted CA (set TEMPORAL_TLS_SERVER_CA_CERT_PATH to the CA that issued it)"},
		{"wrong server CA", withCA, "x509: certificate signed by unknown authority", "TEMPORAL_TLS_SERVER_CA_CERT_PATH does not hold the CA that issued it"},
		{"host not in certificate", tlsOnly, "x509: certificate is valid for temporal.example, not temporal.internal",
			"the server's certificate does not name temporal.internal (set TEMPORAL_TLS_SERVER_NAME to a name it holds)"},
		{"expired server certificate", tlsOnly, "x509: certificate has expired or is not yet valid: current time", "has expired or is not yet valid"},
		{"TLS to plain text", tlsOnly, "tls: first record does not look like a TLS handshake", "does not speak TLS"},
		{"plain text to TLS", plain, errSpeaksTLS.Error(), "requires TLS and this client speaks plain text (set TEMPORAL_TLS=true"},
		{"server down", tlsOnly, "dial tcp 10.0.0.1:7233: connect: connection refused", ""},
		{"not found", plain, "namespace shop is not found", ""},
		{"a plain-text client does not guess from a dropped connection", plain, "write: broken pipe", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.setup.diagnose(tc.msg)
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.True(t, strings.HasPrefix(got, "Temporal at "+addr+" "), got)
			assert.Contains(t, got, tc.want)
		})
	}
}

// TestExplainKeepsTheCause: an explained error wraps the gRPC error and
// keeps its code; other errors come back untouched, even when the probe
// can reach nothing.
func TestExplainKeepsTheCause(t *testing.T) {
	t.Parallel()
	cause := status.Error(codes.Unavailable, `connection error: desc = "error reading server preface: remote error: tls: certificate required"`)
	s := setup{address: "127.0.0.1:7233", tls: &tls.Config{RootCAs: x509.NewCertPool()}}
	err := s.explain(context.Background(), cause)
	require.ErrorIs(t, err, cause)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Contains(t, status.Convert(err).Message(), "requires a client certificate")
	assert.Contains(t, status.Convert(err).Message(), "remote error: tls: certificate required")

	// A dropped connection to a closed port: the probe cannot connect, so
	// there is nothing to add.
	addrs, err := freeport.Addrs(1) // nobody listens there
	require.NoError(t, err)
	closed := addrs[0]
	lost := status.Error(codes.Unavailable, "write tcp: write: broken pipe")
	got := setup{address: closed, tls: &tls.Config{}}.explain(context.Background(), lost)
	assert.True(t, errors.Is(got, lost) && got.Error() == lost.Error(), "unexplained: %v", got)
}
