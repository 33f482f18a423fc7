package mailevents_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // SNS signature version 1
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mailevents"
)

const topic = "arn:aws:sns:us-east-1:123456789012:ses-notifications"

// snsServer is SNS as the verifier meets it: an https server (its
// certificate from httptest's local CA) serving a signing certificate
// and taking subscription confirmations, and the key that signs.
type snsServer struct {
	srv        *httptest.Server
	key        *rsa.PrivateKey
	certFetch  atomic.Int32
	subscribed atomic.Int32
}

func newSNS(t *testing.T) *snsServer {
	t.Helper()
	s := &snsServer{}
	var err error
	s.key, err = rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sns.amazonaws.com"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &s.key.PublicKey, s.key)
	require.NoError(t, err)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/SimpleNotificationService-test.pem":
			s.certFetch.Add(1)
			_, _ = w.Write(certPEM)
		case r.URL.Query().Get("Action") == "ConfirmSubscription":
			s.subscribed.Add(1)
			_, _ = w.Write([]byte(`<ConfirmSubscriptionResponse/>`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *snsServer) verifier() *mailevents.SESVerifier {
	return &mailevents.SESVerifier{Topics: []string{topic}, Client: s.srv.Client(),
		SNSHost: func(host string) bool { return host == "127.0.0.1" }}
}

// message signs an SNS message of typ carrying msg with version.
func (s *snsServer) message(t *testing.T, version, typ, msg string, edit func(map[string]any)) []byte {
	t.Helper()
	m := map[string]any{
		"Type": typ, "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324", "TopicArn": topic, "Message": msg,
		"Timestamp": "2012-05-02T00:54:06.655Z", "SignatureVersion": version,
		"SigningCertURL": s.srv.URL + "/SimpleNotificationService-test.pem",
	}
	if typ == "SubscriptionConfirmation" {
		m["Token"] = "2336412f37fb687f5d51e6e241d7700ae02f7124"
		m["SubscribeURL"] = s.srv.URL + "/?Action=ConfirmSubscription&TopicArn=" + topic + "&Token=2336412f37fb"
	}
	if edit != nil {
		edit(m)
	}
	str := func(k string) string { v, _ := m[k].(string); return v }
	var b strings.Builder
	for _, k := range []string{"Message", "MessageId", "Subject", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"} {
		if _, ok := m[k]; ok {
			b.WriteString(k + "\n" + str(k) + "\n")
		}
	}
	var sig []byte
	var err error
	if version == "1" {
		d := sha1.Sum([]byte(b.String())) //nolint:gosec // version 1
		sig, err = rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA1, d[:])
	} else {
		d := sha256.Sum256([]byte(b.String()))
		sig, err = rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, d[:])
	}
	require.NoError(t, err)
	if _, set := m["Signature"]; !set {
		m["Signature"] = base64.StdEncoding.EncodeToString(sig)
	}
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

// The SES notifications follow the examples of the SES documentation
// (bounce with a DSN, complaint, delivery), with the original headers
// included and the Message-ID Touchpoint set.
const sesBounce = `{"notificationType":"Bounce","bounce":{"bounceType":"Permanent","reportingMTA":"dns; email.example.com",
 "bouncedRecipients":[{"emailAddress":"jane@example.com","status":"5.1.1","action":"failed","diagnosticCode":"smtp; 550 5.1.1 <jane@example.com>... User"}],
 "bounceSubType":"General","timestamp":"2016-01-27T14:59:38.237Z","feedbackId":"00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa068a-000000",
 "remoteMtaIp":"127.0.2.0"},
 "mail":{"timestamp":"2016-01-27T14:59:38.237Z","source":"john@example.com","sourceArn":"arn:aws:ses:us-east-1:888888888888:identity/example.com",
 "sourceIp":"127.0.3.0","sendingAccountId":"123456789012","callerIdentity":"IAM_user_or_role_name",
 "messageId":"00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa0680-000000","destination":["jane@example.com"],
 "headersTruncated":false,"headers":[{"name":"From","value":"\"John Doe\" <john@example.com>"},{"name":"To","value":"\"Jane Doe\" <jane@example.com>"},
 {"name":"Message-ID","value":"` + messageID + `"},{"name":"Subject","value":"Hello"}],
 "commonHeaders":{"from":["John Doe <john@example.com>"],"date":"Wed, 27 Jan 2016 14:05:45 +0000","to":["Jane Doe <jane@example.com>"],
 "messageId":"` + messageID + `","subject":"Hello"}}}`

const sesTransient = `{"notificationType":"Bounce","bounce":{"bounceType":"Transient","bounceSubType":"MailboxFull",
 "bouncedRecipients":[{"emailAddress":"jane@example.com"}],"timestamp":"2016-01-27T14:59:38.237Z"},
 "mail":{"timestamp":"2016-01-27T14:59:38.237Z","messageId":"0000013811","commonHeaders":{"messageId":"` + messageID + `"}}}`

const sesComplaint = `{"notificationType":"Complaint","complaint":{"userAgent":"AnyCompany Feedback Loop (V0.01)",
 "complainedRecipients":[{"emailAddress":"richard@example.com"}],"complaintFeedbackType":"abuse","arrivalDate":"2016-01-27T14:59:38.237Z",
 "timestamp":"2016-01-27T14:59:38.237Z","feedbackId":"000001378603177f-18c07c78-fa81-4a58-9dd1-fedc3cb8f49a-000000"},
 "mail":{"timestamp":"2016-01-27T14:59:38.237Z","messageId":"000001378603177f-7a5433e7-8edb-42ae-af10-f0181f34d6ee-000000",
 "source":"john@example.com","destination":["richard@example.com"],"tags":{"touchpoint-message":["` + reminderID + `"]}}}`

const sesDelivery = `{"notificationType":"Delivery","mail":{"timestamp":"2016-01-27T14:59:38.237Z",
 "messageId":"0000014644fe5ef6-9a483358-9170-4cb4-a269-f5dcdf415321-000000","source":"john@example.com",
 "destination":["jane@example.com"],"headersTruncated":false,"headers":[{"name":"Message-ID","value":"` + messageID + `"}]},
 "delivery":{"timestamp":"2016-01-27T14:59:38.237Z","recipients":["jane@example.com"],"processingTimeMillis":546,
 "reportingMTA":"a8-70.smtp-out.amazonses.com","smtpResponse":"250 ok:  Message 64111812 accepted","remoteMtaIp":"127.0.2.0"}}`

func TestSES(t *testing.T) {
	t.Parallel()
	sns := newSNS(t)
	v := sns.verifier()
	ctx := context.Background()
	tests := []struct {
		name, version, msg string
		want               invite.MailOutcome
		kind               invite.Kind
	}{
		{"permanent bounce, version 1", "1", sesBounce, invite.MailBounced, invite.KindInvite},
		{"permanent bounce, version 2", "2", sesBounce, invite.MailBounced, invite.KindInvite},
		{"transient bounce", "2", sesTransient, invite.MailDeferred, invite.KindInvite},
		{"complaint", "1", sesComplaint, invite.MailComplained, invite.KindReminder},
		{"delivery", "2", sesDelivery, invite.MailDelivered, invite.KindInvite},
	}
	for _, tc := range tests {
		b, err := v.Read(ctx, nil, sns.message(t, tc.version, "Notification", tc.msg, nil))
		require.NoError(t, err, tc.name)
		require.Len(t, b.Reports, 1, tc.name)
		r := b.Reports[0]
		assert.Equal(t, tc.want, r.Outcome, tc.name)
		assert.Equal(t, eventID, r.EventID, tc.name)
		assert.Equal(t, tc.kind, r.Kind, tc.name)
		assert.Equal(t, "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324", r.ID, "the SNS message's ID")
		assert.NotContains(t, r.Detail, "jane@example.com")
	}
	assert.EqualValues(t, 1, sns.certFetch.Load(), "the certificate is fetched once")

	// A subject is signed too.
	b, err := v.Read(ctx, nil, sns.message(t, "2", "Notification", sesDelivery, func(m map[string]any) { m["Subject"] = "Amazon SES Email Event Notification" }))
	require.NoError(t, err)
	assert.Len(t, b.Reports, 1)

	// The subscription is confirmed at its SubscribeURL.
	b, err = v.Read(ctx, nil, sns.message(t, "2", "SubscriptionConfirmation", "You have chosen to subscribe to the topic "+topic, nil))
	require.NoError(t, err)
	assert.Empty(t, b.Reports)
	assert.Contains(t, b.Note, "confirmed")
	assert.EqualValues(t, 1, sns.subscribed.Load())

	// Events that say nothing of delivery.
	b, err = v.Read(ctx, nil, sns.message(t, "2", "Notification", `{"eventType":"Open","mail":{},"open":{}}`, nil))
	require.NoError(t, err)
	assert.Equal(t, 1, b.Ignored)

	// Refused.
	other := newSNS(t)
	refused := map[string]struct {
		body []byte
		err  error
	}{
		"forged (signed by another key)": {other.message(t, "2", "Notification", sesBounce, func(m map[string]any) {
			m["SigningCertURL"] = sns.srv.URL + "/SimpleNotificationService-test.pem"
		}), mailevents.ErrSignature},
		"message changed after signing": {[]byte(strings.Replace(string(sns.message(t, "2", "Notification", sesDelivery, nil)),
			"Delivery", "Bounce", 1)), mailevents.ErrSignature},
		"version 3": {sns.message(t, "2", "Notification", sesDelivery, func(m map[string]any) { m["SignatureVersion"] = "3" }), mailevents.ErrSignature},
		"certificate over http": {sns.message(t, "2", "Notification", sesDelivery, func(m map[string]any) {
			m["SigningCertURL"] = strings.Replace(sns.srv.URL, "https", "http", 1) + "/SimpleNotificationService-test.pem"
		}), mailevents.ErrSignature},
		"certificate elsewhere":   {sns.message(t, "2", "Notification", sesDelivery, func(m map[string]any) { m["SigningCertURL"] = "https://example.com/cert.pem" }), mailevents.ErrSignature},
		"not a .pem":              {sns.message(t, "2", "Notification", sesDelivery, func(m map[string]any) { m["SigningCertURL"] = sns.srv.URL + "/cert" }), mailevents.ErrSignature},
		"another topic":           {sns.message(t, "2", "Notification", sesDelivery, func(m map[string]any) { m["TopicArn"] = "arn:aws:sns:us-east-1:999999999999:other" }), mailevents.ErrTopic},
		"not SNS":                 {[]byte(`{"hello":"world"}`), mailevents.ErrSignature},
		"not an SES notification": {sns.message(t, "2", "Notification", `plain text`, nil), mailevents.ErrMalformed},
		"subscription elsewhere":  {sns.message(t, "2", "SubscriptionConfirmation", "x", func(m map[string]any) { m["SubscribeURL"] = "https://attacker.example/confirm" }), mailevents.ErrMalformed},
	}
	for name, c := range refused {
		_, err := v.Read(ctx, nil, c.body)
		assert.ErrorIs(t, err, c.err, name)
	}
	assert.EqualValues(t, 1, sns.subscribed.Load(), "no other subscription was confirmed")
}

// TestSNSHostRule: certificates and subscriptions come from
// sns.<region>.amazonaws.com only.
func TestSNSHostRule(t *testing.T) {
	t.Parallel()
	for host, ok := range map[string]bool{
		"sns.us-east-1.amazonaws.com":          true,
		"sns.eu-central-1.amazonaws.com":       true,
		"sns.cn-north-1.amazonaws.com.cn":      true,
		"sns.amazonaws.com":                    false,
		"sns.us-east-1.amazonaws.com.evil.com": false,
		"evil-sns.us-east-1.amazonaws.com":     false,
		"sqs.us-east-1.amazonaws.com":          false,
		"sns.us-east-1.amazonaws.com.":         false,
		"127.0.0.1":                            false,
	} {
		assert.Equal(t, ok, mailevents.IsSNSHost(host), host)
	}
	// Without a test hook the rule holds, and no request leaves: the URL
	// is refused before any fetch.
	v := &mailevents.SESVerifier{Topics: []string{topic}}
	sns := newSNS(t)
	_, err := v.Read(context.Background(), nil, sns.message(t, "2", "Notification", sesDelivery, nil))
	assert.ErrorIs(t, err, mailevents.ErrSignature)
	assert.Zero(t, sns.certFetch.Load())
}

// TestSESTopicBeforeFetch: a message of a topic not listed is refused
// before its certificate is fetched — whoever sent it, signed or not —
// so an unlisted topic cannot make Touchpoint fetch anything.
func TestSESTopicBeforeFetch(t *testing.T) {
	t.Parallel()
	sns := newSNS(t)
	v := sns.verifier()
	other := func(m map[string]any) { m["TopicArn"] = "arn:aws:sns:us-east-1:999999999999:other" }
	for name, body := range map[string][]byte{
		"signed":         sns.message(t, "2", "Notification", sesDelivery, other),
		"unsigned":       sns.message(t, "2", "Notification", sesDelivery, func(m map[string]any) { other(m); m["Signature"] = "AAAA" }),
		"a subscription": sns.message(t, "2", "SubscriptionConfirmation", "x", other),
	} {
		_, err := v.Read(context.Background(), nil, body)
		assert.ErrorIs(t, err, mailevents.ErrTopic, name)
	}
	assert.Zero(t, sns.certFetch.Load(), "no certificate fetched")
	assert.Zero(t, sns.subscribed.Load(), "no subscription confirmed")
}
