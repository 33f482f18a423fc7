package temporalclient_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/touchpoint/touchpoint/internal/testtemporal"
	"github.com/touchpoint/touchpoint/temporalclient"
)

// env is a fake environment for Load.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// noFile keeps the user's own temporal.toml out of a test.
func noFile(t *testing.T) string { return filepath.Join(t.TempDir(), "absent.toml") }

func TestLoadDefaultsAndOverrides(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		env       env
		address   string
		namespace string
		tls       bool
	}{
		{name: "nothing set", env: env{}, address: "127.0.0.1:7233", namespace: "default"},
		{name: "address and namespace", env: env{"TEMPORAL_ADDRESS": "temporal:7233", "TEMPORAL_NAMESPACE": "shop"},
			address: "temporal:7233", namespace: "shop"},
		{name: "empty counts as unset", env: env{"TEMPORAL_ADDRESS": " ", "TEMPORAL_NAMESPACE": ""},
			address: "127.0.0.1:7233", namespace: "default"},
		{name: "an API key turns TLS on", env: env{"TEMPORAL_ADDRESS": "eu-west-1.aws.api.temporal.io:7233", "TEMPORAL_API_KEY": "k"},
			address: "eu-west-1.aws.api.temporal.io:7233", namespace: "default", tls: true},
		{name: "TLS switched on", env: env{"TEMPORAL_TLS": "true"}, address: "127.0.0.1:7233", namespace: "default", tls: true},
		{name: "TLS switched off despite an API key", env: env{"TEMPORAL_API_KEY": "k", "TEMPORAL_TLS": "false"},
			address: "127.0.0.1:7233", namespace: "default"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.env["TEMPORAL_CONFIG_FILE"] = noFile(t)
			cfg, err := temporalclient.Load(tc.env.get)
			require.NoError(t, err)
			assert.Equal(t, tc.address, cfg.Address())
			assert.Equal(t, tc.namespace, cfg.Namespace())
			assert.Equal(t, tc.tls, cfg.TLS())
			opts, err := cfg.ClientOptions()
			require.NoError(t, err)
			assert.Equal(t, tc.address, opts.HostPort)
			assert.Equal(t, tc.namespace, opts.Namespace)
			assert.Equal(t, tc.tls, opts.ConnectionOptions.TLS != nil)
			assert.Equal(t, tc.env["TEMPORAL_API_KEY"] != "", opts.Credentials != nil)
		})
	}
}

// TestVariablesListsWhatLoadReads: every variable Load looks up is in
// Variables (so deployment files can be checked against it), except the
// codec settings, which Load ignores on purpose.
func TestVariablesListsWhatLoadReads(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	read := map[string]bool{}
	_, err := temporalclient.Load(func(k string) string {
		mu.Lock()
		defer mu.Unlock()
		read[k] = true
		if k == "TEMPORAL_CONFIG_FILE" {
			return noFile(t)
		}
		return ""
	})
	require.NoError(t, err)
	require.Contains(t, read, "TEMPORAL_ADDRESS", "sanity: the lookups were seen")
	for k := range read {
		if strings.HasPrefix(k, "TEMPORAL_CODEC_") {
			continue
		}
		assert.Contains(t, temporalclient.Variables, k)
	}
}

// TestPlain: a plain configuration is exactly what it says, whatever a
// profile or the environment would say.
func TestPlain(t *testing.T) {
	t.Parallel()
	cfg := temporalclient.Plain("127.0.0.1:17233", "dev")
	assert.Equal(t, "127.0.0.1:17233", cfg.Address())
	assert.Equal(t, "dev", cfg.Namespace())
	assert.False(t, cfg.TLS())
	opts, err := cfg.ClientOptions()
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:17233", opts.HostPort)
	assert.Equal(t, "dev", opts.Namespace)
	assert.Nil(t, opts.ConnectionOptions.TLS)
	assert.Nil(t, opts.Credentials)
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "temporal.toml")
	require.NoError(t, os.WriteFile(file, []byte("[profile.default]\naddress = \"a:1\"\n"), 0o600))
	cases := []struct {
		name string
		env  env
		want string
	}{
		{name: "unknown profile", env: env{"TEMPORAL_CONFIG_FILE": file, "TEMPORAL_PROFILE": "prod"}, want: "prod"},
		{name: "missing certificate file", env: env{"TEMPORAL_CONFIG_FILE": file,
			"TEMPORAL_TLS_CLIENT_CERT_PATH": filepath.Join(dir, "none.pem"), "TEMPORAL_TLS_CLIENT_KEY_PATH": filepath.Join(dir, "none-key.pem")},
			want: "none.pem"},
		{name: "certificate without key", env: env{"TEMPORAL_CONFIG_FILE": file, "TEMPORAL_TLS_CLIENT_CERT_PATH": file},
			want: "other must be present"},
		{name: "unreadable config file", env: env{"TEMPORAL_CONFIG_FILE": dir}, want: dir},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := temporalclient.Load(tc.env.get)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestLogValueMasksSecrets: a logged configuration shows where things come
// from, never the API key or a private key.
func TestLogValueMasksSecrets(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	keyPEM, err := os.ReadFile(pki.clientKey)
	require.NoError(t, err)
	certPEM, err := os.ReadFile(pki.clientCert)
	require.NoError(t, err)
	cfg, err := temporalclient.Load(env{
		"TEMPORAL_CONFIG_FILE":             noFile(t),
		"TEMPORAL_ADDRESS":                 "ns.a1b2c.tmprl.cloud:7233",
		"TEMPORAL_NAMESPACE":               "ns.a1b2c",
		"TEMPORAL_API_KEY":                 "secret-api-key-123",
		"TEMPORAL_TLS_CLIENT_CERT_DATA":    string(certPEM),
		"TEMPORAL_TLS_CLIENT_KEY_DATA":     string(keyPEM),
		"TEMPORAL_TLS_SERVER_CA_CERT_PATH": pki.ca,
	}.get)
	require.NoError(t, err)

	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "temporal", cfg)
	out := buf.String()
	assert.NotContains(t, out, "secret-api-key-123")
	assert.NotContains(t, out, "PRIVATE KEY")
	assert.NotContains(t, out, "BEGIN CERTIFICATE")
	for _, want := range []string{`"address":"ns.a1b2c.tmprl.cloud:7233"`, `"namespace":"ns.a1b2c"`, `"tls":true`,
		`"api_key":true`, `"client_cert":"inline"`, `"client_key":true`, `"server_ca":"` + pki.ca + `"`} {
		assert.Contains(t, out, want)
	}
}

// TestMutualTLS runs a Temporal frontend that requires client certificates
// from one CA and connects to it the ways a deployment would configure.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	srv := testtemporal.Start(t, testtemporal.Options{
		Namespace: "touchpoint-mtls",
		LogLevel:  "error",
		TLS:       &testtemporal.TLS{CertFile: pki.serverCert, KeyFile: pki.serverKey, ClientCAFile: pki.ca},
		UI:        true, // the UI is one more client of the mTLS frontend
	})
	plain := testtemporal.Start(t, testtemporal.Options{LogLevel: "error"})

	certPEM, err := os.ReadFile(pki.clientCert)
	require.NoError(t, err)
	keyPEM, err := os.ReadFile(pki.clientKey)
	require.NoError(t, err)
	toml := filepath.Join(t.TempDir(), "temporal.toml")
	require.NoError(t, os.WriteFile(toml, fmt.Appendf(nil, `
[profile.default]
address = "127.0.0.1:1"

[profile.prod]
address = %q
namespace = "touchpoint-mtls"

[profile.prod.tls]
client_cert_path = %q
client_key_path = %q
server_ca_cert_path = %q
`, srv.Address(), pki.clientCert, pki.clientKey, pki.ca), 0o600))

	base := func(t *testing.T) env {
		return env{
			"TEMPORAL_CONFIG_FILE":             noFile(t),
			"TEMPORAL_ADDRESS":                 srv.Address(),
			"TEMPORAL_NAMESPACE":               "touchpoint-mtls",
			"TEMPORAL_TLS_SERVER_CA_CERT_PATH": pki.ca,
		}
	}
	with := func(e env, kv ...string) env {
		for i := 0; i < len(kv); i += 2 {
			e[kv[i]] = kv[i+1]
		}
		return e
	}
	refused := "Temporal at " + srv.Address() + " refused the connection during the TLS handshake: "
	untrusted := "Temporal at " + srv.Address() + " was not trusted during the TLS handshake: "

	cases := []struct {
		name string
		env  func(t *testing.T) env
		want string // "" connects
	}{
		{name: "client certificate files", env: func(t *testing.T) env {
			return with(base(t), "TEMPORAL_TLS_CLIENT_CERT_PATH", pki.clientCert, "TEMPORAL_TLS_CLIENT_KEY_PATH", pki.clientKey)
		}},
		{name: "client certificate inline", env: func(t *testing.T) env {
			return with(base(t), "TEMPORAL_TLS_CLIENT_CERT_DATA", string(certPEM), "TEMPORAL_TLS_CLIENT_KEY_DATA", string(keyPEM))
		}},
		{name: "temporal.toml profile", env: func(t *testing.T) env {
			return env{"TEMPORAL_CONFIG_FILE": toml, "TEMPORAL_PROFILE": "prod"}
		}},
		{name: "server name set explicitly", env: func(t *testing.T) env {
			return with(base(t), "TEMPORAL_TLS_CLIENT_CERT_PATH", pki.clientCert, "TEMPORAL_TLS_CLIENT_KEY_PATH", pki.clientKey,
				"TEMPORAL_TLS_SERVER_NAME", "temporal.touchpoint.test")
		}},
		{name: "no client certificate", env: base,
			want: refused + "the server requires a client certificate (set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)"},
		{name: "client certificate from another CA", env: func(t *testing.T) env {
			return with(base(t), "TEMPORAL_TLS_CLIENT_CERT_PATH", pki.rogueCert, "TEMPORAL_TLS_CLIENT_KEY_PATH", pki.rogueKey)
		}, want: refused + "the server did not accept the client certificate"},
		{name: "server CA unknown", env: func(t *testing.T) env {
			e := with(base(t), "TEMPORAL_TLS_CLIENT_CERT_PATH", pki.clientCert, "TEMPORAL_TLS_CLIENT_KEY_PATH", pki.clientKey)
			delete(e, "TEMPORAL_TLS_SERVER_CA_CERT_PATH")
			return e
		}, want: untrusted + "the server's certificate is not signed by a trusted CA (set TEMPORAL_TLS_SERVER_CA_CERT_PATH"},
		{name: "wrong server CA", env: func(t *testing.T) env {
			return with(base(t), "TEMPORAL_TLS_CLIENT_CERT_PATH", pki.clientCert, "TEMPORAL_TLS_CLIENT_KEY_PATH", pki.clientKey,
				"TEMPORAL_TLS_SERVER_CA_CERT_PATH", pki.rogueCA)
		}, want: untrusted + "the server's certificate is not signed by a trusted CA (TEMPORAL_TLS_SERVER_CA_CERT_PATH does not hold"},
		{name: "wrong server name", env: func(t *testing.T) env {
			return with(base(t), "TEMPORAL_TLS_CLIENT_CERT_PATH", pki.clientCert, "TEMPORAL_TLS_CLIENT_KEY_PATH", pki.clientKey,
				"TEMPORAL_TLS_SERVER_NAME", "elsewhere.test")
		}, want: untrusted + "the server's certificate does not name elsewhere.test (set TEMPORAL_TLS_SERVER_NAME to a name it holds)"},
		{name: "plain text to a TLS server", env: func(t *testing.T) env {
			return env{"TEMPORAL_CONFIG_FILE": noFile(t), "TEMPORAL_ADDRESS": srv.Address(), "TEMPORAL_NAMESPACE": "touchpoint-mtls"}
		}, want: "Temporal at " + srv.Address() + " requires TLS and this client speaks plain text (set TEMPORAL_TLS=true"},
		{name: "TLS to a plain-text server", env: func(t *testing.T) env {
			return with(base(t), "TEMPORAL_ADDRESS", plain.Address(), "TEMPORAL_NAMESPACE", "default",
				"TEMPORAL_TLS_CLIENT_CERT_PATH", pki.clientCert, "TEMPORAL_TLS_CLIENT_KEY_PATH", pki.clientKey)
		}, want: "Temporal at " + plain.Address() + " does not speak TLS"},
	}
	t.Run("the Web UI reaches the frontend", func(t *testing.T) {
		t.Parallel()
		resp, err := http.Get(srv.UIURL() + "/api/v1/namespaces")
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		assert.Contains(t, string(body), `"touchpoint-mtls"`)
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := temporalclient.Load(tc.env(t).get)
			require.NoError(t, err)
			opts, err := cfg.ClientOptions()
			require.NoError(t, err)
			opts.Logger = sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			c, err := temporalclient.Dial(ctx, opts)
			if tc.want != "" {
				require.Error(t, err)
				assert.ErrorContains(t, err, tc.want)
				var unavailable *serviceerror.Unavailable
				assert.ErrorAs(t, err, &unavailable, "the SDK's error stays in the chain")

				// A lazy client explains its first call alike.
				lazy, err := temporalclient.NewLazy(opts)
				require.NoError(t, err)
				defer lazy.Close()
				_, err = lazy.CheckHealth(ctx, &client.CheckHealthRequest{})
				require.Error(t, err)
				assert.ErrorContains(t, err, tc.want)
				return
			}
			require.NoError(t, err)
			defer c.Close()
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			require.NoError(t, err)
			desc, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: cfg.Namespace()})
			require.NoError(t, err)
			assert.Equal(t, "touchpoint-mtls", desc.GetNamespaceInfo().GetName())
		})
	}
}

// pki is a test CA with a server certificate for 127.0.0.1 and
// temporal.touchpoint.test and a client certificate, plus a client
// certificate from another CA, all as PEM files.
type pki struct {
	ca, serverCert, serverKey, clientCert, clientKey string
	rogueCA, rogueCert, rogueKey                     string
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
		return path
	}
	ca, caKey, caDER := newCert(t, "Touchpoint test CA", nil, nil, func(c *x509.Certificate) {
		c.IsCA, c.BasicConstraintsValid, c.KeyUsage = true, true, x509.KeyUsageCertSign
	})
	rogue, rogueKey, rogueDER := newCert(t, "Another CA", nil, nil, func(c *x509.Certificate) {
		c.IsCA, c.BasicConstraintsValid, c.KeyUsage = true, true, x509.KeyUsageCertSign
	})
	server := func(c *x509.Certificate) {
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		c.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		c.DNSNames = []string{"temporal.touchpoint.test"}
	}
	clientUse := func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth} }
	_, sKey, sDER := newCert(t, "temporal.touchpoint.test", ca, caKey, server)
	_, cKey, cDER := newCert(t, "touchpoint-worker", ca, caKey, clientUse)
	_, rKey, rDER := newCert(t, "intruder", rogue, rogueKey, clientUse)
	return pki{
		ca:         write("ca.pem", "CERTIFICATE", caDER),
		serverCert: write("server.pem", "CERTIFICATE", sDER),
		serverKey:  write("server-key.pem", "EC PRIVATE KEY", marshalKey(t, sKey)),
		clientCert: write("client.pem", "CERTIFICATE", cDER),
		clientKey:  write("client-key.pem", "EC PRIVATE KEY", marshalKey(t, cKey)),
		rogueCA:    write("rogue-ca.pem", "CERTIFICATE", rogueDER),
		rogueCert:  write("rogue.pem", "CERTIFICATE", rDER),
		rogueKey:   write("rogue-key.pem", "EC PRIVATE KEY", marshalKey(t, rKey)),
	}
}

// newCert makes a certificate signed by parent (self-signed when nil).
func newCert(t *testing.T, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, adjust func(*x509.Certificate)) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	adjust(tmpl)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert, key, der
}

func marshalKey(t *testing.T, k *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(k)
	require.NoError(t, err)
	return der
}
