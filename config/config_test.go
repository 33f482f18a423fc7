package config_test

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
	assert.Equal(t, "https://reviews.shop.example/sms/status", c.SMS.StatusCallbackURL)
	assert.Equal(t, "https://reviews.shop.example/sms/inbound", c.SMSInboundURL())

	c, err = config.Load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8080/feedback", c.FeedbackURL, "the default base URL's")

	c, err = config.Load(env(map[string]string{"TOUCHPOINT_BASE_URL": "https://reviews.shop.example",
		"TOUCHPOINT_FEEDBACK_URL": "https://shop.example/reviews/give", "TOUCHPOINT_SMS_STATUS_CALLBACK_URL": "https://hooks.shop.example/sms"}))
	require.NoError(t, err)
	assert.Equal(t, "https://shop.example/reviews/give", c.FeedbackURL, "its own variable wins")
	assert.Equal(t, "https://hooks.shop.example/sms", c.SMS.StatusCallbackURL)
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
		"database":      {map[string]string{"DATABASE_URL": "mysql://x"}, "DATABASE_URL"},
		"read replica":  {map[string]string{"DATABASE_READ_URL": "replica:5432"}, "DATABASE_READ_URL"},
		"base url":      {map[string]string{"TOUCHPOINT_BASE_URL": "not a url"}, "TOUCHPOINT_BASE_URL"},
		"issuer":        {map[string]string{"TOUCHPOINT_OIDC_ISSUER": "ftp://x"}, "TOUCHPOINT_OIDC_ISSUER"},
		"smtp":          {map[string]string{"TOUCHPOINT_SMTP_URL": "http://mail"}, "TOUCHPOINT_SMTP_URL"},
		"flush":         {map[string]string{"TOUCHPOINT_TOKEN_USE_FLUSH_INTERVAL": "10s"}, "TOUCHPOINT_TOKEN_USE_FLUSH_INTERVAL"},
		"short secret":  {map[string]string{"TOUCHPOINT_SECRET_KEY": "short"}, "TOUCHPOINT_SECRET_KEY"},
		"listen":        {map[string]string{"TOUCHPOINT_API_ADDR": "8080"}, "TOUCHPOINT_API_ADDR"},
		"worker listen": {map[string]string{"TOUCHPOINT_WORKER_ADDR": "localhost"}, "TOUCHPOINT_WORKER_ADDR"},
		"temporal certificate": {map[string]string{"TEMPORAL_TLS_CLIENT_CERT_PATH": "/nonexistent/client.pem",
			"TEMPORAL_TLS_CLIENT_KEY_PATH": "/nonexistent/client.key"}, "/nonexistent/client.pem"},
		"webhooks": {map[string]string{"TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE": "yes"}, "TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE"},
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
		"TEMPORAL_CONFIG_FILE":             filepath.Join(t.TempDir(), "absent.toml"),
		"TEMPORAL_ADDRESS":                 "ns.acct.tmprl.cloud:7233",
		"TEMPORAL_TLS_CLIENT_CERT_DATA":    certPEM,
		"TOUCHPOINT_POSTMARK_WEBHOOK_USER": "postmark",
	}
	for _, name := range config.SecretVariables {
		assert.Contains(t, config.Variables, name)
		sample, ok := samples[name]
		require.True(t, ok, "add a sample value of %s to this test", name)
		vars[name] = sample.value
	}
	c, err := config.Load(env(vars))
	require.NoError(t, err)
	logged := c.LogValue().String() + c.Temporal.LogValue().String()
	for name, sample := range samples {
		assert.NotContains(t, logged, sample.secret, name)
	}
	assert.Contains(t, logged, "mail:587")
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

func TestSMS(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{"TOUCHPOINT_BASE_URL": "https://api.example.com/"}))
	require.NoError(t, err)
	assert.False(t, c.SMSConfigured(), "no provider by default")
	assert.Equal(t, "https://api.twilio.com", c.SMS.URL)
	assert.Equal(t, "https://api.example.com/sms/status", c.SMS.StatusCallbackURL, "the callback defaults to the base URL's")
	assert.Equal(t, "https://api.example.com/sms/inbound", c.SMSInboundURL())
	require.NoError(t, c.Validate(false))

	full := map[string]string{
		"TOUCHPOINT_SMS_URL":                   "http://127.0.0.1:4010",
		"TOUCHPOINT_SMS_ACCOUNT_SID":           "AC0123",
		"TOUCHPOINT_SMS_AUTH_TOKEN":            "sms-auth-token-value",
		"TOUCHPOINT_SMS_FROM":                  "+15005550006",
		"TOUCHPOINT_SMS_MESSAGING_SERVICE_SID": "MG0123",
		"TOUCHPOINT_SMS_STATUS_CALLBACK_URL":   "https://hooks.example.com/touchpoint/sms/status",
	}
	c, err = config.Load(env(full))
	require.NoError(t, err)
	require.NoError(t, c.Validate(false))
	assert.True(t, c.SMSConfigured())
	assert.Equal(t, config.SMS{URL: "http://127.0.0.1:4010", AccountSID: "AC0123", AuthToken: "sms-auth-token-value",
		From: "+15005550006", MessagingServiceSID: "MG0123", StatusCallbackURL: "https://hooks.example.com/touchpoint/sms/status"}, c.SMS)
	logged := c.LogValue().String()
	assert.NotContains(t, logged, "sms-auth-token-value", "the auth token is masked")
	assert.Contains(t, logged, "AC0123")

	for name, tc := range map[string]struct {
		drop       []string
		set        map[string]string
		configured bool
		want       string // in the error; "" for none
	}{
		"a number only":             {drop: []string{"TOUCHPOINT_SMS_MESSAGING_SERVICE_SID"}, configured: true},
		"a messaging service only":  {drop: []string{"TOUCHPOINT_SMS_FROM"}, configured: true},
		"no sender":                 {drop: []string{"TOUCHPOINT_SMS_FROM", "TOUCHPOINT_SMS_MESSAGING_SERVICE_SID"}, want: "TOUCHPOINT_SMS_FROM"},
		"no token":                  {drop: []string{"TOUCHPOINT_SMS_AUTH_TOKEN"}, want: "TOUCHPOINT_SMS_AUTH_TOKEN"},
		"no account":                {drop: []string{"TOUCHPOINT_SMS_ACCOUNT_SID"}, want: "TOUCHPOINT_SMS_ACCOUNT_SID"},
		"a relative URL":            {set: map[string]string{"TOUCHPOINT_SMS_URL": "api.twilio.com"}, configured: true, want: "TOUCHPOINT_SMS_URL"},
		"credentials in the URL":    {set: map[string]string{"TOUCHPOINT_SMS_URL": "https://u:p@api.twilio.com"}, configured: true, want: "TOUCHPOINT_SMS_URL"},
		"a relative callback":       {set: map[string]string{"TOUCHPOINT_SMS_STATUS_CALLBACK_URL": "/sms/status"}, configured: true, want: "TOUCHPOINT_SMS_STATUS_CALLBACK_URL"},
		"an unused sender is wrong": {drop: []string{"TOUCHPOINT_SMS_ACCOUNT_SID", "TOUCHPOINT_SMS_AUTH_TOKEN", "TOUCHPOINT_SMS_MESSAGING_SERVICE_SID"}, want: "TOUCHPOINT_SMS_AUTH_TOKEN"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			kv := map[string]string{}
			for k, v := range full {
				kv[k] = v
			}
			for _, k := range tc.drop {
				delete(kv, k)
			}
			for k, v := range tc.set {
				kv[k] = v
			}
			c, err := config.Load(env(kv))
			require.NoError(t, err)
			assert.Equal(t, tc.configured, c.SMSConfigured())
			err = c.Validate(false)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "sms-auth-token-value")
		})
	}
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

// TestMailEvents: each mail provider's event webhook is on once its
// verification settings are set, and off otherwise; its secrets are
// masked in the logged configuration and a bad value is named.
func TestMailEvents(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	require.NoError(t, err)
	assert.Empty(t, c.MailEvents.Providers(), "no provider by default")
	require.NoError(t, c.Validate(false))

	key := sendGridKey(t)
	c, err = config.Load(env(map[string]string{
		"TOUCHPOINT_SES_TOPIC_ARNS":              " arn:aws:sns:eu-west-1:123456789012:ses-a , ,arn:aws:sns:us-east-1:123456789012:ses-b",
		"TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY": key,
		"TOUCHPOINT_POSTMARK_WEBHOOK_USER":       "postmark",
		"TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD":   "postmark-password-value",
		"TOUCHPOINT_MAILGUN_SIGNING_KEY":         "mailgun-signing-key-value",
	}))
	require.NoError(t, err)
	require.NoError(t, c.Validate(false))
	assert.Equal(t, []string{"arn:aws:sns:eu-west-1:123456789012:ses-a", "arn:aws:sns:us-east-1:123456789012:ses-b"}, c.MailEvents.SESTopicARNs)
	assert.Equal(t, []string{"ses", "sendgrid", "postmark", "mailgun"}, c.MailEvents.Providers())
	logged := c.LogValue().String()
	assert.NotContains(t, logged, "postmark-password-value")
	assert.NotContains(t, logged, "mailgun-signing-key-value")
	assert.Contains(t, logged, "ses-a")

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
			c, err := config.Load(env(tc.set))
			require.NoError(t, err)
			assert.ErrorContains(t, c.Validate(false), tc.want)
		})
	}
}

// sendGridKey is a verification key as SendGrid shows it: base64 of the
// DER form of an ECDSA P-256 public key.
func sendGridKey(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(der)
}

func TestConsoleProvider(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, config.Console{}, c.Console, "the built-in issuer by default")

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
		"a client without a provider": {map[string]string{"TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID": "c"}, "TOUCHPOINT_CONSOLE_OIDC_ISSUER"},
		"a provider without a client": {map[string]string{"TOUCHPOINT_CONSOLE_OIDC_ISSUER": "https://idp.example"}, "TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID"},
		"not a URL":                   {map[string]string{"TOUCHPOINT_CONSOLE_OIDC_ISSUER": "idp.example", "TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID": "c"}, "TOUCHPOINT_CONSOLE_OIDC_ISSUER"},
		"the built-in issuer":         {map[string]string{"TOUCHPOINT_CONSOLE_OIDC_ISSUER": "http://127.0.0.1:8081/", "TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID": "c"}, "TOUCHPOINT_CONSOLE_OIDC_ISSUER"},
		"matching without a provider": {map[string]string{"TOUCHPOINT_CONSOLE_MATCH_EMAIL": "true"}, "TOUCHPOINT_CONSOLE_MATCH_EMAIL"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := config.Load(env(tc.set))
			require.NoError(t, err)
			assert.ErrorContains(t, c.Validate(false), tc.want)
		})
	}
}
