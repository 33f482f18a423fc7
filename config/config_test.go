package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/temporalclient"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8080", c.APIAddr)
	assert.Equal(t, "127.0.0.1:8081", c.AuthAddr)
	assert.Equal(t, []string{"http://127.0.0.1:8081"}, c.OIDCIssuers, "the built-in issuer by default")
	assert.NoError(t, c.Validate(false))
	assert.ErrorContains(t, c.Validate(true), "TOUCHPOINT_SECRET_KEY", "the secret key is required outside dev")
}

func TestDerivedAndListValues(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{
		"TOUCHPOINT_BASE_URL":    "https://api.example.com/",
		"TOUCHPOINT_AUTH_URL":    "http://auth:9000",
		"TOUCHPOINT_OIDC_ISSUER": " https://kc.example.com/realms/x , http://auth:9000 ,",
		"TOUCHPOINT_SECRET_KEY":  strings.Repeat("k", 32),
	}))
	require.NoError(t, err)
	assert.Equal(t, "https://api.example.com", c.BaseURL, "trailing slash trimmed: it is the token audience")
	assert.Equal(t, "api.example.com:443", c.APIAddr)
	assert.Equal(t, "auth:9000", c.AuthAddr)
	assert.Equal(t, []string{"https://kc.example.com/realms/x", "http://auth:9000"}, c.OIDCIssuers)
	assert.NoError(t, c.Validate(true))
}

func TestBadValuesAreNamed(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"duration":      {map[string]string{"TOUCHPOINT_TOKEN_MAX_LIFETIME": "forever"}, "TOUCHPOINT_TOKEN_MAX_LIFETIME"},
		"body size":     {map[string]string{"TOUCHPOINT_MAX_BODY_BYTES": "12"}, "TOUCHPOINT_MAX_BODY_BYTES"},
		"database":      {map[string]string{"DATABASE_URL": "mysql://x"}, "DATABASE_URL"},
		"base url":      {map[string]string{"TOUCHPOINT_BASE_URL": "not a url"}, "TOUCHPOINT_BASE_URL"},
		"issuer":        {map[string]string{"TOUCHPOINT_OIDC_ISSUER": "ftp://x"}, "TOUCHPOINT_OIDC_ISSUER"},
		"smtp":          {map[string]string{"TOUCHPOINT_SMTP_URL": "http://mail"}, "TOUCHPOINT_SMTP_URL"},
		"flush":         {map[string]string{"TOUCHPOINT_TOKEN_USE_FLUSH_INTERVAL": "10s"}, "TOUCHPOINT_TOKEN_USE_FLUSH_INTERVAL"},
		"short secret":  {map[string]string{"TOUCHPOINT_SECRET_KEY": "short"}, "TOUCHPOINT_SECRET_KEY"},
		"listen":        {map[string]string{"TOUCHPOINT_API_ADDR": "8080"}, "TOUCHPOINT_API_ADDR"},
		"worker listen": {map[string]string{"TOUCHPOINT_WORKER_ADDR": "localhost"}, "TOUCHPOINT_WORKER_ADDR"},
		"temporal certificate": {map[string]string{"TEMPORAL_TLS_CLIENT_CERT_PATH": "/nonexistent/client.pem",
			"TEMPORAL_TLS_CLIENT_KEY_PATH": "/nonexistent/client.key"}, "/nonexistent/client.pem"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Load(env(tc.env))
			if err == nil {
				err = c.Validate(true)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestLogValueMasksSecrets(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{
		"TEMPORAL_CONFIG_FILE":  filepath.Join(t.TempDir(), "absent.toml"),
		"TEMPORAL_ADDRESS":      "ns.acct.tmprl.cloud:7233",
		"TEMPORAL_API_KEY":      "temporal-api-key-value",
		"DATABASE_URL":          "postgres://u:hunter2@db/x",
		"TOUCHPOINT_SMTP_URL":   "smtp://mailer:smtp-pass@mail:587",
		"TOUCHPOINT_SECRET_KEY": "super-secret-key-super-secret-key",
	}))
	require.NoError(t, err)
	logged := c.LogValue().String()
	for _, secret := range []string{"hunter2", "smtp-pass", "super-secret-key", "temporal-api-key-value"} {
		assert.NotContains(t, logged, secret)
	}
	assert.Contains(t, logged, "mail:587")
}

// TestTemporalClientFromTemporalsConfiguration: the client settings come
// from Temporal's own variables and profile file, not from Touchpoint's.
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
			c, err := config.Load(env(tc.env))
			require.NoError(t, err)
			require.NoError(t, c.Validate(false))
			assert.Equal(t, tc.address, c.Temporal.Address())
			assert.Equal(t, tc.namespace, c.Temporal.Namespace())
			assert.Equal(t, tc.tls, c.Temporal.TLS())
		})
	}
}

// TestVariablesIncludeTemporals: deployment files are checked against
// Variables, so Temporal's own variables must be in it.
func TestVariablesIncludeTemporals(t *testing.T) {
	t.Parallel()
	for _, v := range append([]string{"TOUCHPOINT_WORKER_ADDR"}, temporalclient.Variables...) {
		assert.Contains(t, config.Variables, v)
	}
}
