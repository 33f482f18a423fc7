package sections_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/internal/sections"
	"github.com/touchpoint/touchpoint/internal/settings"
	"github.com/touchpoint/touchpoint/mailevents"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/temporalclient"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// load reads kv as a process does: the configuration, then every
// section's check of the values it read.
func load(t *testing.T, kv map[string]string) (config.Config, error) {
	t.Helper()
	c, err := config.Load(env(kv))
	require.NoError(t, err)
	return c, sections.Check(c.Settings)
}

// TestConfigCopyIsCurrent: config's generated copy of the sections is
// what the packages hand it now, so config.Variables (which deployment
// files are checked against) and config.SecretVariables hold every
// section's variables.
func TestConfigCopyIsCurrent(t *testing.T) {
	t.Parallel()
	src, err := sections.ConfigSource()
	require.NoError(t, err)
	current, err := os.ReadFile(sections.ConfigFile)
	require.NoError(t, err)
	require.Equal(t, string(src), string(current), "config's copy of the sections is stale: run go generate ./internal/sections")

	var names []settings.Section
	for _, s := range sections.All() {
		s.Check = nil
		names = append(names, s)
	}
	assert.Equal(t, names, config.Sections())
	for _, s := range sections.All() {
		for _, v := range s.Vars {
			assert.Contains(t, config.Variables, v.Name)
			if v.Secret {
				assert.Contains(t, config.SecretVariables, v.Name)
			} else {
				assert.NotContains(t, config.SecretVariables, v.Name)
			}
		}
	}
	assert.Contains(t, config.Variables, "TOUCHPOINT_WORKER_ADDR", "config's own too")
}

// TestLogValueMasksSecrets: no variable of SecretVariables shows in the
// logged configuration (the process's and its Temporal client's).
func TestLogValueMasksSecrets(t *testing.T) {
	t.Parallel()
	keyPEM, certPEM := clientCertificate(t)
	// Each value with the part that must not be logged.
	samples := map[string]struct{ value, secret string }{
		"DATABASE_URL":                          {"postgres://u:hunter2@db/x", "hunter2"},
		"DATABASE_READ_URL":                     {"postgres://u:replica-pass@replica/x", "replica-pass"},
		"TOUCHPOINT_SECRET_KEY":                 {"super-secret-key-super-secret-key", "super-secret-key"},
		"TOUCHPOINT_SMTP_URL":                   {"smtp://mailer:smtp-pass@mail:587", "smtp-pass"},
		"TOUCHPOINT_SMS_AUTH_TOKEN":             {"sms-auth-token-value", "sms-auth-token-value"},
		"TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD":  {"postmark-password-value", "postmark-password-value"},
		"TOUCHPOINT_MAILGUN_SIGNING_KEY":        {"mailgun-signing-key-value", "mailgun-signing-key-value"},
		"TOUCHPOINT_CONSOLE_OIDC_CLIENT_SECRET": {"console-client-secret-value", "console-client-secret-value"},
		"TEMPORAL_API_KEY":                      {"temporal-api-key-value", "temporal-api-key-value"},
		"TEMPORAL_TLS_CLIENT_KEY_DATA":          {keyPEM, strings.Split(keyPEM, "\n")[1]},
	}
	vars := map[string]string{
		"TEMPORAL_CONFIG_FILE":               filepath.Join(t.TempDir(), "absent.toml"),
		"TEMPORAL_ADDRESS":                   "ns.acct.tmprl.cloud:7233",
		"TEMPORAL_TLS_CLIENT_CERT_DATA":      certPEM,
		"TOUCHPOINT_POSTMARK_WEBHOOK_USER":   "postmark",
		"TOUCHPOINT_SMS_ACCOUNT_SID":         "AC0123",
		"TOUCHPOINT_SMS_STATUS_CALLBACK_URL": "https://hook:hook-pass@hooks.example.com/sms",
	}
	for _, name := range config.SecretVariables {
		assert.Contains(t, config.Variables, name)
		sample, ok := samples[name]
		require.True(t, ok, "add a sample value of %s to this test", name)
		vars[name] = sample.value
	}
	c, err := config.Load(env(vars))
	require.NoError(t, err)
	tc, err := temporalclient.Load(c.Settings.Get)
	require.NoError(t, err)
	logged := c.LogValue().String() + tc.LogValue().String()
	for name, sample := range samples {
		assert.NotContains(t, logged, sample.secret, name)
	}
	assert.NotContains(t, logged, "hook-pass", "a password in a section's URL")
	for _, shown := range []string{"mail:587", "AC0123", "postmark", "hooks.example.com"} {
		assert.Contains(t, logged, shown)
	}
}

// clientCertificate makes a self-signed client certificate and its key, PEM.
func clientCertificate(t *testing.T) (keyPEM, certPEM string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "touchpoint"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(k)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})),
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestTemporalClientFromTemporalsConfiguration: the client settings come
// from Temporal's own variables and profile file, not from Touchpoint's,
// through the values the configuration read; a certificate it cannot
// read stops the process at start, named.
func TestTemporalClientFromTemporalsConfiguration(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "temporal.toml")
	require.NoError(t, os.WriteFile(file, []byte(`
[profile.prod]
address = "temporal.internal:7233"
namespace = "touchpoint"
`), 0o600))
	for _, tc := range []struct {
		name               string
		env                map[string]string
		address, namespace string
		tls                bool
	}{
		{"defaults", map[string]string{"TEMPORAL_CONFIG_FILE": filepath.Join(t.TempDir(), "absent.toml")}, "127.0.0.1:7233", "default", false},
		{"a profile", map[string]string{"TEMPORAL_CONFIG_FILE": file, "TEMPORAL_PROFILE": "prod"}, "temporal.internal:7233", "touchpoint", false},
		{"variables over the profile", map[string]string{"TEMPORAL_CONFIG_FILE": file, "TEMPORAL_PROFILE": "prod",
			"TEMPORAL_NAMESPACE": "other", "TEMPORAL_API_KEY": "k"}, "temporal.internal:7233", "other", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := load(t, tc.env)
			require.NoError(t, err)
			require.NoError(t, c.Validate(false))
			temporal, err := temporalclient.Load(c.Settings.Get)
			require.NoError(t, err)
			assert.Equal(t, tc.address, temporal.Address())
			assert.Equal(t, tc.namespace, temporal.Namespace())
			assert.Equal(t, tc.tls, temporal.TLS())
		})
	}
	_, err := load(t, map[string]string{"TEMPORAL_TLS_CLIENT_CERT_PATH": "/nonexistent/client.pem",
		"TEMPORAL_TLS_CLIENT_KEY_PATH": "/nonexistent/client.key"})
	assert.ErrorContains(t, err, "/nonexistent/client.pem")
}

// TestSMSThroughTheConfiguration: the SMS provider's settings come through
// the configuration's values, its callbacks on the base URL unless its
// own variable says otherwise; a half-made configuration is named at
// start.
func TestSMSThroughTheConfiguration(t *testing.T) {
	t.Parallel()
	c, err := load(t, map[string]string{"TOUCHPOINT_BASE_URL": "https://reviews.shop.example/", "TOUCHPOINT_SMS_ACCOUNT_SID": "AC0123",
		"TOUCHPOINT_SMS_AUTH_TOKEN": "token", "TOUCHPOINT_SMS_FROM": "+15005550006"})
	require.NoError(t, err)
	s, ok, err := sms.LoadSetup(c.Settings.Get, c.BaseURL)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "https://reviews.shop.example/sms/status", s.Callbacks.StatusURL)
	assert.Equal(t, "https://reviews.shop.example/sms/inbound", s.Callbacks.InboundURL)

	_, err = load(t, map[string]string{"TOUCHPOINT_SMS_ACCOUNT_SID": "AC0123"})
	assert.ErrorContains(t, err, "TOUCHPOINT_SMS_AUTH_TOKEN")
}

// TestMailEventsThroughTheConfiguration: each mail provider's reports are
// taken once its settings are set, through the configuration's values;
// a bad value is named at start.
func TestMailEventsThroughTheConfiguration(t *testing.T) {
	t.Parallel()
	c, err := load(t, nil)
	require.NoError(t, err)
	vs, err := mailevents.Verifiers(c.Settings.Get)
	require.NoError(t, err)
	assert.Empty(t, vs, "no provider by default")

	c, err = load(t, map[string]string{
		"TOUCHPOINT_SES_TOPIC_ARNS":              " arn:aws:sns:eu-west-1:123456789012:ses-a , ,arn:aws:sns:us-east-1:123456789012:ses-b",
		"TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY": sendGridKey(t),
		"TOUCHPOINT_POSTMARK_WEBHOOK_USER":       "postmark",
		"TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD":   "postmark-password-value",
		"TOUCHPOINT_MAILGUN_SIGNING_KEY":         "mailgun-signing-key-value",
	})
	require.NoError(t, err)
	vs, err = mailevents.Verifiers(c.Settings.Get)
	require.NoError(t, err)
	var names []string
	for _, v := range vs {
		names = append(names, v.Provider())
	}
	assert.Equal(t, []string{"ses", "sendgrid", "postmark", "mailgun"}, names)
	assert.Equal(t, []string{"arn:aws:sns:eu-west-1:123456789012:ses-a", "arn:aws:sns:us-east-1:123456789012:ses-b"},
		vs[0].(*mailevents.SESVerifier).Topics)

	for name, tc := range map[string]struct {
		set  map[string]string
		want string
	}{
		"not a topic ARN":           {map[string]string{"TOUCHPOINT_SES_TOPIC_ARNS": "ses-notifications"}, "TOUCHPOINT_SES_TOPIC_ARNS"},
		"a key that is not base64":  {map[string]string{"TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY": "not base64!"}, "TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY"},
		"a key that is not a key":   {map[string]string{"TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY": "bm90IGEga2V5"}, "TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY"},
		"a Postmark user alone":     {map[string]string{"TOUCHPOINT_POSTMARK_WEBHOOK_USER": "postmark"}, "TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD"},
		"a Postmark password alone": {map[string]string{"TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD": "secret"}, "TOUCHPOINT_POSTMARK_WEBHOOK_USER"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, tc.set)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// sendGridKey is a verification key as SendGrid shows it: base64 of the
// DER public key.
func sendGridKey(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(der)
}
