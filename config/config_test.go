package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/config"
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
	assert.False(t, c.WebhookAllowPrivate, "webhooks reach public addresses only, unless told")
}

func TestWorkerVersioning(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{"true": true, "false": false, "": false} {
		c, err := config.Load(env(map[string]string{"TOUCHPOINT_WORKER_VERSIONING": v}))
		require.NoError(t, err)
		assert.Equal(t, want, c.WorkerVersioning, "%q", v)
	}
	_, err := config.Load(env(map[string]string{"TOUCHPOINT_WORKER_VERSIONING": "yes"}))
	assert.ErrorContains(t, err, "TOUCHPOINT_WORKER_VERSIONING")
}

func TestWebhookAllowPrivate(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{"true": true, "false": false, "": false} {
		c, err := config.Load(env(map[string]string{"TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE": v}))
		require.NoError(t, err)
		assert.Equal(t, want, c.WebhookAllowPrivate, "%q", v)
	}
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

// TestURLsDeriveFromTheBaseURL: every URL that reaches a customer or a
// provider is on TOUCHPOINT_BASE_URL unless its own variable is set.
func TestURLsDeriveFromTheBaseURL(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{"TOUCHPOINT_BASE_URL": "https://reviews.shop.example/"}))
	require.NoError(t, err)
	assert.Equal(t, "https://reviews.shop.example/feedback", c.FeedbackURL)

	c, err = config.Load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8080/feedback", c.FeedbackURL, "the default base URL's")

	c, err = config.Load(env(map[string]string{"TOUCHPOINT_BASE_URL": "https://reviews.shop.example",
		"TOUCHPOINT_FEEDBACK_URL": "https://shop.example/reviews/give"}))
	require.NoError(t, err)
	assert.Equal(t, "https://shop.example/reviews/give", c.FeedbackURL, "its own variable wins")
}

func TestFeedbackLinkTTL(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]time.Duration{"": 90 * 24 * time.Hour, "720h": 720 * time.Hour, "0": 0} {
		c, err := config.Load(env(map[string]string{"TOUCHPOINT_FEEDBACK_LINK_TTL": v}))
		require.NoError(t, err)
		assert.Equal(t, want, c.FeedbackLinkTTL, "%q", v)
	}
	for _, v := range []string{"90d", "-1h", "soon"} {
		_, err := config.Load(env(map[string]string{"TOUCHPOINT_FEEDBACK_LINK_TTL": v}))
		assert.ErrorContains(t, err, "TOUCHPOINT_FEEDBACK_LINK_TTL", "%q", v)
	}
}

func TestEventRetention(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]time.Duration{"": 400 * 24 * time.Hour, "2160h": 2160 * time.Hour, "0": 0} {
		c, err := config.Load(env(map[string]string{"TOUCHPOINT_EVENT_RETENTION": v}))
		require.NoError(t, err)
		assert.Equal(t, want, c.EventRetention, "%q", v)
	}
	for _, v := range []string{"400d", "-1h", "forever"} {
		_, err := config.Load(env(map[string]string{"TOUCHPOINT_EVENT_RETENTION": v}))
		assert.ErrorContains(t, err, "TOUCHPOINT_EVENT_RETENTION", "%q", v)
	}
}

func TestShutdownDrain(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]time.Duration{"": 0, "0": 0, "10s": 10 * time.Second} {
		c, err := config.Load(env(map[string]string{"TOUCHPOINT_SHUTDOWN_DRAIN": v}))
		require.NoError(t, err)
		require.NoError(t, c.Validate(false))
		assert.Equal(t, want, c.ShutdownDrain, "%q", v)
	}
	for _, v := range []string{"-1s", "soon", "3m"} {
		c, err := config.Load(env(map[string]string{"TOUCHPOINT_SHUTDOWN_DRAIN": v}))
		if err == nil {
			err = c.Validate(false)
		}
		assert.ErrorContains(t, err, "TOUCHPOINT_SHUTDOWN_DRAIN", "%q", v)
	}
}

func TestBadValuesAreNamed(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"duration":      {map[string]string{"TOUCHPOINT_TOKEN_MAX_LIFETIME": "forever"}, "TOUCHPOINT_TOKEN_MAX_LIFETIME"},
		"body size":     {map[string]string{"TOUCHPOINT_MAX_BODY_BYTES": "12"}, "TOUCHPOINT_MAX_BODY_BYTES"},
		"batch bytes":   {map[string]string{"TOUCHPOINT_BATCH_INFLIGHT_BYTES": "1048576"}, "TOUCHPOINT_BATCH_INFLIGHT_BYTES"},
		"batch share":   {map[string]string{"TOUCHPOINT_BATCH_INFLIGHT_BYTES": "16777216"}, "TOUCHPOINT_BATCH_INFLIGHT_BYTES"},
		"burst":         {map[string]string{"TOUCHPOINT_RATE_BURST": "0"}, `TOUCHPOINT_RATE_BURST: "0" is not a positive whole number`},
		"few conns":     {map[string]string{"TOUCHPOINT_DB_MAX_CONNS": "1"}, `TOUCHPOINT_DB_MAX_CONNS: "1" is not a connection count from 2 to 1000`},
		"many conns":    {map[string]string{"TOUCHPOINT_DB_MAX_CONNS": "1001"}, "TOUCHPOINT_DB_MAX_CONNS"},
		"huge quota":    {map[string]string{"TOUCHPOINT_WEBHOOK_QUOTA": "99999999999999999999"}, "TOUCHPOINT_WEBHOOK_QUOTA"},
		"database":      {map[string]string{"DATABASE_URL": "mysql://x"}, "DATABASE_URL"},
		"read replica":  {map[string]string{"DATABASE_READ_URL": "replica:5432"}, "DATABASE_READ_URL"},
		"base url":      {map[string]string{"TOUCHPOINT_BASE_URL": "not a url"}, "TOUCHPOINT_BASE_URL"},
		"issuer":        {map[string]string{"TOUCHPOINT_OIDC_ISSUER": "ftp://x"}, "TOUCHPOINT_OIDC_ISSUER"},
		"smtp":          {map[string]string{"TOUCHPOINT_SMTP_URL": "http://mail"}, "TOUCHPOINT_SMTP_URL"},
		"flush":         {map[string]string{"TOUCHPOINT_TOKEN_USE_FLUSH_INTERVAL": "10s"}, "TOUCHPOINT_TOKEN_USE_FLUSH_INTERVAL"},
		"short secret":  {map[string]string{"TOUCHPOINT_SECRET_KEY": "short"}, "TOUCHPOINT_SECRET_KEY"},
		"listen":        {map[string]string{"TOUCHPOINT_API_ADDR": "8080"}, "TOUCHPOINT_API_ADDR"},
		"worker listen": {map[string]string{"TOUCHPOINT_WORKER_ADDR": "localhost"}, "TOUCHPOINT_WORKER_ADDR"},
		"webhooks":      {map[string]string{"TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE": "yes"}, "TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE"},
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

func TestSecurityValues(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{
		"TOUCHPOINT_TRUSTED_PROXIES":     " 10.0.0.0/8, 192.168.1.7 ,fd00::/8,::ffff:172.16.0.0/108",
		"TOUCHPOINT_JWKS_REFRESH":        "90s",
		"TOUCHPOINT_DAILY_SEND_QUOTA":    "0",
		"TOUCHPOINT_RECIPIENT_DAILY_CAP": "5",
		"TOUCHPOINT_CHANNEL_QUOTA":       "7",
		"TOUCHPOINT_EVENT_TYPE_QUOTA":    "9",
		"TOUCHPOINT_OIDC_ISSUER":         "https://shop.eu.auth0.com/|maxLifetime=24h",
		"TOUCHPOINT_SMTP_URL":            "smtp://mail:587?starttls=required",
	}))
	require.NoError(t, err)
	require.NoError(t, c.Validate(false))
	var proxies []string
	for _, p := range c.TrustedProxies {
		proxies = append(proxies, p.String())
	}
	assert.Equal(t, []string{"10.0.0.0/8", "192.168.1.7/32", "fd00::/8", "172.16.0.0/12"}, proxies)
	assert.Equal(t, 90*time.Second, c.JWKSRefresh)
	assert.Equal(t, 0, c.DailySendQuota, "0 lifts the limit")
	assert.Equal(t, 5, c.RecipientDailyCap)
	assert.Equal(t, 7, c.ChannelQuota)
	assert.Equal(t, 9, c.EventTypeQuota)
	assert.Equal(t, 24*time.Hour, c.OIDCIssuerOptions["https://shop.eu.auth0.com/"].MaxLifetime)

	d, err := config.Load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, 5*time.Minute, d.JWKSRefresh)
	assert.Equal(t, 10_000, d.DailySendQuota)
	assert.Equal(t, 3, d.RecipientDailyCap)
	assert.Equal(t, 100, d.ChannelQuota)
	assert.Equal(t, 500, d.EventTypeQuota)
	assert.Empty(t, d.TrustedProxies)
}

func TestBadSecurityValuesAreNamed(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"proxy":             {map[string]string{"TOUCHPOINT_TRUSTED_PROXIES": "10.0.0.0/8,proxy.internal"}, "TOUCHPOINT_TRUSTED_PROXIES"},
		"proxy prefix":      {map[string]string{"TOUCHPOINT_TRUSTED_PROXIES": "10.0.0.0/33"}, "TOUCHPOINT_TRUSTED_PROXIES"},
		"refresh too long":  {map[string]string{"TOUCHPOINT_JWKS_REFRESH": "6m"}, "TOUCHPOINT_JWKS_REFRESH"},
		"refresh junk":      {map[string]string{"TOUCHPOINT_JWKS_REFRESH": "often"}, "TOUCHPOINT_JWKS_REFRESH"},
		"negative quota":    {map[string]string{"TOUCHPOINT_DAILY_SEND_QUOTA": "-1"}, "TOUCHPOINT_DAILY_SEND_QUOTA"},
		"cap junk":          {map[string]string{"TOUCHPOINT_RECIPIENT_DAILY_CAP": "three"}, "TOUCHPOINT_RECIPIENT_DAILY_CAP"},
		"channel quota":     {map[string]string{"TOUCHPOINT_CHANNEL_QUOTA": "1.5"}, "TOUCHPOINT_CHANNEL_QUOTA"},
		"event type quota":  {map[string]string{"TOUCHPOINT_EVENT_TYPE_QUOTA": "x"}, "TOUCHPOINT_EVENT_TYPE_QUOTA"},
		"max lifetime":      {map[string]string{"TOUCHPOINT_OIDC_ISSUER": "https://idp.example|maxLifetime=forever"}, "maxLifetime"},
		"starttls value":    {map[string]string{"TOUCHPOINT_SMTP_URL": "smtp://mail:587?starttls=maybe"}, "TOUCHPOINT_SMTP_URL"},
		"smtp parameter":    {map[string]string{"TOUCHPOINT_SMTP_URL": "smtp://mail:587?tls=on"}, "TOUCHPOINT_SMTP_URL"},
		"starttls on smtps": {map[string]string{"TOUCHPOINT_SMTP_URL": "smtps://mail?starttls=required"}, "TOUCHPOINT_SMTP_URL"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Load(env(tc.env))
			if err == nil {
				err = c.Validate(false)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestMissingSecretKeySaysWhy(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	require.NoError(t, err)
	err = c.Validate(true)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TOUCHPOINT_SECRET_KEY: is not set")
	assert.Contains(t, err.Error(), "openssl rand -hex 32")
}

func TestConsoleProvider(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, config.Console{}, c.Console, "the built-in issuer by default")
	assert.Empty(t, c.TemporalUIURL, "no link to a Temporal UI by default")
	c, err = config.Load(env(map[string]string{"TOUCHPOINT_TEMPORAL_UI_URL": "https://temporal.shop.example"}))
	require.NoError(t, err)
	require.NoError(t, c.Validate(false))
	assert.Equal(t, "https://temporal.shop.example", c.TemporalUIURL)

	c, err = config.Load(env(map[string]string{
		"TOUCHPOINT_CONSOLE_OIDC_ISSUER":        "https://keycloak.example/realms/shop",
		"TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID":     "touchpoint-console",
		"TOUCHPOINT_CONSOLE_OIDC_CLIENT_SECRET": "console-client-secret-value",
		"TOUCHPOINT_CONSOLE_MATCH_EMAIL":        "true",
	}))
	require.NoError(t, err)
	require.NoError(t, c.Validate(false))
	assert.Equal(t, config.Console{Issuer: "https://keycloak.example/realms/shop", ClientID: "touchpoint-console",
		ClientSecret: "console-client-secret-value", MatchEmail: true}, c.Console)
	logged := c.LogValue().String()
	assert.NotContains(t, logged, "console-client-secret-value")
	assert.Contains(t, logged, "keycloak.example")

	_, err = config.Load(env(map[string]string{"TOUCHPOINT_CONSOLE_MATCH_EMAIL": "yes"}))
	assert.ErrorContains(t, err, "TOUCHPOINT_CONSOLE_MATCH_EMAIL")
	for name, tc := range map[string]struct {
		set  map[string]string
		want string
	}{
		"a client without a provider":  {map[string]string{"TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID": "c"}, "TOUCHPOINT_CONSOLE_OIDC_ISSUER"},
		"a provider without a client":  {map[string]string{"TOUCHPOINT_CONSOLE_OIDC_ISSUER": "https://idp.example"}, "TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID"},
		"not a URL":                    {map[string]string{"TOUCHPOINT_CONSOLE_OIDC_ISSUER": "idp.example", "TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID": "c"}, "TOUCHPOINT_CONSOLE_OIDC_ISSUER"},
		"the built-in issuer":          {map[string]string{"TOUCHPOINT_CONSOLE_OIDC_ISSUER": "http://127.0.0.1:8081/", "TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID": "c"}, "TOUCHPOINT_CONSOLE_OIDC_ISSUER"},
		"matching without a provider":  {map[string]string{"TOUCHPOINT_CONSOLE_MATCH_EMAIL": "true"}, "TOUCHPOINT_CONSOLE_MATCH_EMAIL"},
		"a Temporal UI that is no URL": {map[string]string{"TOUCHPOINT_TEMPORAL_UI_URL": "temporal:8080"}, "TOUCHPOINT_TEMPORAL_UI_URL"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := config.Load(env(tc.set))
			require.NoError(t, err)
			assert.ErrorContains(t, c.Validate(false), tc.want)
		})
	}
}
