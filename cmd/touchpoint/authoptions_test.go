package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/config"
)

func TestVerifierOptionsIssuerEntries(t *testing.T) {
	t.Parallel()
	load := func(issuers string) (config.Config, error) {
		cfg, err := config.Load(func(k string) string {
			return map[string]string{"TOUCHPOINT_AUTH_URL": "http://localhost:8081/", "TOUCHPOINT_BASE_URL": "http://api.touchpoint.test",
				"TOUCHPOINT_OIDC_DISCOVERY_URL": "http://auth:8081", "TOUCHPOINT_OIDC_ISSUER": issuers}[k]
		})
		if err == nil {
			err = cfg.Validate(false)
		}
		return cfg, err
	}
	cfg, err := load("https://kc.example.com/realms/shop|audience=touchpoint-api, https://tenant.auth0.example/|maxLifetime=24h ," +
		" http://localhost:8180/realms/x | audience = api://touchpoint | discovery=http://keycloak:8080/realms/x/," +
		" http://localhost:8081/")
	require.NoError(t, err)
	assert.Equal(t, []auth.Issuer{
		{URL: "https://kc.example.com/realms/shop", Audience: "touchpoint-api"},
		{URL: "https://tenant.auth0.example/", MaxLifetime: 24 * time.Hour}, // iss is compared exactly
		{URL: "http://localhost:8180/realms/x", Audience: "api://touchpoint", DiscoveryURL: "http://keycloak:8080/realms/x"},
		{URL: "http://localhost:8081", DiscoveryURL: "http://auth:8081"}, // the built-in issuer
	}, verifierOptions(cfg, nil, nil).Issuers)

	for _, bad := range []string{
		"https://kc.example.com|aud=x",
		"https://kc.example.com|audience=",
		"https://kc.example.com|discovery=kc:8080",
		"|audience=x",
		"http://localhost:8081|discovery=http://elsewhere:8081", // contradicts TOUCHPOINT_OIDC_DISCOVERY_URL
	} {
		_, err := load(bad)
		assert.ErrorContains(t, err, "TOUCHPOINT_OIDC_ISSUER", bad)
	}
}

func TestIssuerOptions(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"TOUCHPOINT_AUTH_URL": "http://localhost:8081", "TOUCHPOINT_BASE_URL": "http://api.touchpoint.test",
			"TOUCHPOINT_SECRET_KEY": "0123456789abcdef0123456789abcdef", "TOUCHPOINT_TOKEN_MAX_LIFETIME": "30m"}[k]
	})
	require.NoError(t, err)
	o := issuerOptions(cfg, nil, nil)
	assert.Equal(t, "http://localhost:8081", o.Issuer)
	assert.Equal(t, "http://api.touchpoint.test", o.Audience)
	assert.Equal(t, cfg.SecretKey, o.SecretKey)
	assert.Equal(t, 30*time.Minute, o.TokenLifetime)
	assert.Equal(t, cfg.TokenIdleTimeout, o.IdleTimeout)
	assert.Equal(t, cfg.SigningKeyRotation, o.KeyRotation)
	assert.Equal(t, cfg.JWKSRefresh, o.JWKSRefresh)
}
