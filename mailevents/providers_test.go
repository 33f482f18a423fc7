package mailevents_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/mailevents"
)

// TestProviderTags: a message sent with the registry's tags carries its
// ID where each provider hands it back in its reports: Postmark's
// metadata, Mailgun's variables, SendGrid's unique arguments and SES's
// message tags.
func TestProviderTags(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	s, err := mail.NewSMTP(srv.URL(), "Touchpoint <invites@touchpoint.example>", mail.SMTPOptions{Tags: mailevents.Tags()})
	require.NoError(t, err)
	require.NoError(t, s.Send(t.Context(), mail.Message{EventID: eventID, Reminder: true, To: "jane@example.com",
		Subject: "How was it?", Text: "Tell us."}))
	msgs := srv.Messages()
	require.Len(t, msgs, 1)
	parsed, err := msgs[0].Parse()
	require.NoError(t, err)
	header := func(provider string) string {
		p, ok := mailevents.Lookup(provider)
		require.True(t, ok, provider)
		return parsed.Header.Get(p.Tag.Header)
	}

	assert.Equal(t, reminderID, header(mailevents.Postmark))
	assert.Equal(t, "touchpoint-message="+reminderID, header(mailevents.SES))
	var vars map[string]string
	require.NoError(t, json.Unmarshal([]byte(header(mailevents.Mailgun)), &vars))
	assert.Equal(t, map[string]string{"touchpoint-message": reminderID}, vars)
	var smtpapi struct {
		UniqueArgs map[string]string `json:"unique_args"`
	}
	require.NoError(t, json.Unmarshal([]byte(header(mailevents.SendGrid)), &smtpapi))
	assert.Equal(t, map[string]string{"touchpoint-message": reminderID}, smtpapi.UniqueArgs)
}

// TestRegistry: each provider's settings make its verifier — none while
// they are unset, an error naming the variable when they are wrong — and
// the section handed to the configuration holds every provider's
// variables.
func TestRegistry(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"ses", "sendgrid", "postmark", "mailgun"}, mailevents.Names())
	none := func(string) string { return "" }
	vs, err := mailevents.Verifiers(none)
	require.NoError(t, err)
	assert.Empty(t, vs, "no provider by default")

	env := map[string]string{
		"TOUCHPOINT_SES_TOPIC_ARNS":              "arn:aws:sns:eu-west-1:123456789012:ses-a, arn:aws:sns:us-east-1:123456789012:ses-b",
		"TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY": sendGridKey(t),
		"TOUCHPOINT_POSTMARK_WEBHOOK_USER":       "postmark",
		"TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD":   "s3cret",
		"TOUCHPOINT_MAILGUN_SIGNING_KEY":         "key-3ax6xnjp29jd6fds4gc373sgvjxteol0",
	}
	vs, err = mailevents.Verifiers(func(k string) string { return env[k] })
	require.NoError(t, err)
	var names []string
	for _, v := range vs {
		names = append(names, v.Provider())
	}
	assert.Equal(t, mailevents.Names(), names)
	ses := vs[0].(*mailevents.SESVerifier)
	assert.Equal(t, []string{"arn:aws:sns:eu-west-1:123456789012:ses-a", "arn:aws:sns:us-east-1:123456789012:ses-b"}, ses.Topics)

	section := mailevents.Settings()
	var vars []string
	for _, p := range mailevents.Providers() {
		require.NotEmpty(t, p.Settings, p.Name)
		require.NotNil(t, p.Verifier, p.Name)
		require.NotEmpty(t, p.Tag.Header, p.Name)
		for _, v := range p.Settings {
			vars = append(vars, v.Name)
		}
	}
	var got []string
	for _, v := range section.Vars {
		got = append(got, v.Name)
	}
	assert.Equal(t, vars, got)
	assert.NoError(t, section.Check(func(k string) string { return env[k] }))

	for name, bad := range map[string]map[string]string{
		"TOUCHPOINT_SES_TOPIC_ARNS":              {"TOUCHPOINT_SES_TOPIC_ARNS": "ses-topic"},
		"TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY": {"TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY": "not base64!"},
		"TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD":   {"TOUCHPOINT_POSTMARK_WEBHOOK_USER": "postmark"},
	} {
		err := section.Check(func(k string) string { return bad[k] })
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
	}
}

// sendGridKey is a verification key as SendGrid shows it.
func sendGridKey(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(der)
}
