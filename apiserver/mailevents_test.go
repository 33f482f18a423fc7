package apiserver_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mailevents"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
)

// The mail providers as the test API knows them: SNS is a local https
// server that serves its signing certificate and takes subscription
// confirmations (the verifier's test hooks point it there, never at
// AWS); SendGrid, Postmark and Mailgun sign with keys made here.
const (
	testSESTopic         = "arn:aws:sns:eu-west-1:123456789012:touchpoint-ses"
	testPostmarkUser     = "postmark-hooks"
	testPostmarkPassword = "apiserver-test-postmark-password"
	testMailgunKey       = "apiserver-test-mailgun-signing-key"
)

// mailProviders signs requests as each provider does.
type mailProviders struct {
	sns        *httptest.Server
	snsKey     *rsa.PrivateKey
	snsDown    atomic.Bool // the certificate is not served
	subscribed atomic.Int32
	sendgrid   *ecdsa.PrivateKey
	n          atomic.Int64 // makes report IDs and tokens unique
}

func newMailProviders(t testing.TB) *mailProviders {
	t.Helper()
	p := &mailProviders{}
	var err error
	p.snsKey, err = rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sns.amazonaws.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &p.snsKey.PublicKey, p.snsKey)
	require.NoError(t, err)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	p.sns = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/SimpleNotificationService-test.pem" && !p.snsDown.Load():
			_, _ = w.Write(certPEM)
		case r.URL.Query().Get("Action") == "ConfirmSubscription":
			p.subscribed.Add(1)
			_, _ = w.Write([]byte(`<ConfirmSubscriptionResponse/>`))
		default:
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(p.sns.Close)
	p.sendgrid, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return p
}

// verifiers are the API's verifiers of the providers named (all when
// none is).
func (p *mailProviders) verifiers(t testing.TB, only ...string) []mailevents.Verifier {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&p.sendgrid.PublicKey)
	require.NoError(t, err)
	sg, err := mailevents.NewSendGridVerifier(base64.StdEncoding.EncodeToString(der))
	require.NoError(t, err)
	all := []mailevents.Verifier{
		&mailevents.SESVerifier{Topics: []string{testSESTopic}, Client: p.sns.Client(),
			SNSHost: func(host string) bool { return host == "127.0.0.1" }},
		sg,
		mailevents.PostmarkVerifier{User: testPostmarkUser, Password: testPostmarkPassword},
		mailevents.MailgunVerifier{SigningKey: testMailgunKey},
	}
	if len(only) == 0 {
		return all
	}
	var out []mailevents.Verifier
	for _, v := range all {
		for _, o := range only {
			if v.Provider() == o {
				out = append(out, v)
			}
		}
	}
	return out
}

func (p *mailProviders) next() string { return strconv.FormatInt(p.n.Add(1), 10) }

// mailRequest is a provider's request: its body and headers.
type mailRequest struct {
	provider string
	body     string
	headers  []header
}

// post sends req to the provider's route.
func (e *env) post(t testing.TB, req mailRequest) response {
	t.Helper()
	return e.do(t, http.MethodPost, "/mail-events/"+req.provider, "", req.body, req.headers...)
}

// snsMessage signs an SNS message of typ carrying message with
// signature version 2; edit changes it before signing.
func (p *mailProviders) snsMessage(t testing.TB, typ, message string, edit func(map[string]string)) mailRequest {
	t.Helper()
	m := map[string]string{"Type": typ, "MessageId": "sns-" + p.next(), "TopicArn": testSESTopic, "Message": message,
		"Timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "SignatureVersion": "2",
		"SigningCertURL": p.sns.URL + "/SimpleNotificationService-test.pem"}
	if typ == "SubscriptionConfirmation" {
		m["Token"] = "2336412f37fb687f5d51e6e241d7700ae02f7124"
		m["SubscribeURL"] = p.sns.URL + "/?Action=ConfirmSubscription&TopicArn=" + testSESTopic + "&Token=2336412f37fb"
	}
	if edit != nil {
		edit(m)
	}
	var b strings.Builder
	for _, k := range []string{"Message", "MessageId", "Subject", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"} {
		if v, ok := m[k]; ok {
			b.WriteString(k + "\n" + v + "\n")
		}
	}
	d := sha256.Sum256([]byte(b.String()))
	sig, err := rsa.SignPKCS1v15(rand.Reader, p.snsKey, crypto.SHA256, d[:])
	require.NoError(t, err)
	if _, set := m["Signature"]; !set {
		m["Signature"] = base64.StdEncoding.EncodeToString(sig)
	}
	body, err := json.Marshal(m)
	require.NoError(t, err)
	// SNS posts JSON as text/plain.
	return mailRequest{provider: mailevents.SES, body: string(body), headers: []header{{"Content-Type", "text/plain; charset=UTF-8"}}}
}

// The reports of each provider on the message of event id, as the
// provider words them, for outcome delivered, bounced or complained.

func (p *mailProviders) ses(t testing.TB, id string, outcome invite.MailOutcome) mailRequest {
	t.Helper()
	at := time.Now().UTC().Format(time.RFC3339Nano)
	mail := fmt.Sprintf(`{"timestamp":%q,"source":"reviews@shop.example","messageId":"0100-ses-%s",
		"headers":[{"name":"Message-ID","value":"<%s@shop.example>"}],"commonHeaders":{"messageId":"<%s@shop.example>"}}`,
		at, p.next(), id, id)
	var n string
	switch outcome {
	case invite.MailDelivered:
		n = fmt.Sprintf(`{"notificationType":"Delivery","delivery":{"timestamp":%q,"smtpResponse":"250 ok"},"mail":%s}`, at, mail)
	case invite.MailBounced:
		n = fmt.Sprintf(`{"notificationType":"Bounce","bounce":{"bounceType":"Permanent","bounceSubType":"General",
			"timestamp":%q,"bouncedRecipients":[{"emailAddress":"jane@example.com","status":"5.1.1",
			"diagnosticCode":"smtp; 550 5.1.1 <jane@example.com> user unknown"}]},"mail":%s}`, at, mail)
	case invite.MailComplained:
		n = fmt.Sprintf(`{"notificationType":"Complaint","complaint":{"timestamp":%q,"complaintFeedbackType":"abuse"},"mail":%s}`, at, mail)
	}
	return p.snsMessage(t, "Notification", n, nil)
}

func (p *mailProviders) sendGridSigned(t testing.TB, body string, signedAt time.Time) mailRequest {
	t.Helper()
	stamp := strconv.FormatInt(signedAt.Unix(), 10)
	d := sha256.Sum256([]byte(stamp + body))
	sig, err := ecdsa.SignASN1(rand.Reader, p.sendgrid, d[:])
	require.NoError(t, err)
	return mailRequest{provider: mailevents.SendGrid, body: body, headers: []header{
		{mailevents.SendGridSignatureHeader, base64.StdEncoding.EncodeToString(sig)},
		{mailevents.SendGridTimestampHeader, stamp}}}
}

func (p *mailProviders) sendGrid(t testing.TB, id string, outcome invite.MailOutcome) mailRequest {
	t.Helper()
	ev := map[string]any{"email": "jane@example.com", "timestamp": time.Now().Unix(), "sg_event_id": "sg-" + p.next(),
		"sg_message_id": "14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0", "smtp-id": "<" + id + "@shop.example>",
		"touchpoint-message": id}
	switch outcome {
	case invite.MailDelivered:
		ev["event"], ev["response"] = "delivered", "250 OK"
	case invite.MailBounced:
		ev["event"], ev["type"], ev["status"], ev["reason"] = "bounce", "bounce", "5.1.1", "550 5.1.1 user unknown"
	case invite.MailComplained:
		ev["event"] = "spamreport"
	}
	// An open in the same batch says nothing of delivery.
	body, err := json.Marshal([]any{ev, map[string]any{"event": "open", "sg_event_id": "sg-" + p.next(), "timestamp": time.Now().Unix()}})
	require.NoError(t, err)
	return p.sendGridSigned(t, string(body), time.Now())
}

func (p *mailProviders) postmarkAs(user, password, body string) mailRequest {
	return mailRequest{provider: mailevents.Postmark, body: body, headers: []header{
		{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}}}
}

func (p *mailProviders) postmark(t testing.TB, id string, outcome invite.MailOutcome) mailRequest {
	t.Helper()
	at := time.Now().UTC().Format(time.RFC3339)
	ev := map[string]any{"MessageID": "883953f4-6105-42a2-a16a-77a8eac79483-" + p.next(), "Recipient": "jane@example.com",
		"Metadata": map[string]string{"touchpoint-message": id}, "MessageStream": "outbound"}
	switch outcome {
	case invite.MailDelivered:
		ev["RecordType"], ev["DeliveredAt"], ev["Details"] = "Delivery", at, "Test delivery webhook details"
	case invite.MailBounced:
		ev["RecordType"], ev["ID"], ev["Type"], ev["BouncedAt"] = "Bounce", 4323372036854775807, "HardBounce", at
		ev["Description"] = "The server was unable to deliver your message (ex: unknown user, mailbox not found)."
	case invite.MailComplained:
		ev["RecordType"], ev["ID"], ev["Type"], ev["BouncedAt"] = "SpamComplaint", 42, "SpamComplaint", at
	}
	body, err := json.Marshal(ev)
	require.NoError(t, err)
	return p.postmarkAs(testPostmarkUser, testPostmarkPassword, string(body))
}

// mailgunSigned wraps event-data in Mailgun's signature, with key, at
// time at, with token.
func mailgunSigned(t testing.TB, key string, at time.Time, token string, eventData map[string]any) mailRequest {
	t.Helper()
	body, err := json.Marshal(map[string]any{"signature": map[string]any{"timestamp": strconv.FormatInt(at.Unix(), 10),
		"token": token, "signature": mailevents.SignMailgun(key, at.Unix(), token)}, "event-data": eventData})
	require.NoError(t, err)
	return mailRequest{provider: mailevents.Mailgun, body: string(body)}
}

func (p *mailProviders) mailgun(t testing.TB, id string, outcome invite.MailOutcome) mailRequest {
	t.Helper()
	ev := map[string]any{"id": "mg-" + p.next(), "timestamp": float64(time.Now().UnixMilli()) / 1000, "recipient": "jane@example.com",
		"user-variables": map[string]string{"touchpoint-message": id},
		"message":        map[string]any{"headers": map[string]string{"message-id": id + "@shop.example"}}}
	switch outcome {
	case invite.MailDelivered:
		ev["event"] = "delivered"
	case invite.MailBounced:
		ev["event"], ev["severity"], ev["reason"] = "failed", "permanent", "bounce"
		ev["delivery-status"] = map[string]any{"code": 550, "message": "5.1.1 The email account does not exist"}
	case invite.MailComplained:
		ev["event"] = "complained"
	}
	return mailgunSigned(t, testMailgunKey, time.Now(), "mg-token-"+p.next(), ev)
}

// report is one provider's report on event id's message.
func (p *mailProviders) report(t testing.TB, provider, id string, outcome invite.MailOutcome) mailRequest {
	switch provider {
	case mailevents.SES:
		return p.ses(t, id, outcome)
	case mailevents.SendGrid:
		return p.sendGrid(t, id, outcome)
	case mailevents.Postmark:
		return p.postmark(t, id, outcome)
	}
	return p.mailgun(t, id, outcome)
}

// forged is req with a signature (or credentials) that is not the
// provider's.
func (p *mailProviders) forged(t testing.TB, req mailRequest) mailRequest {
	t.Helper()
	switch req.provider {
	case mailevents.SES:
		var m map[string]string
		require.NoError(t, json.Unmarshal([]byte(req.body), &m))
		m["Message"] = strings.Replace(m["Message"], "Delivery", "Bounce", 1) // signed over the old text
		b, _ := json.Marshal(m)
		req.body = string(b)
	case mailevents.SendGrid:
		req.body = strings.Replace(req.body, "delivered", "bounce", 1)
	case mailevents.Postmark:
		req = p.postmarkAs(testPostmarkUser, "not the password", req.body)
	case mailevents.Mailgun:
		req.body = strings.Replace(req.body, `"signature":"`, `"signature":"0`, 1)
	}
	return req
}

// emailed makes an account with one event whose invite was sent by
// email, and returns the account, the event and a full token.
func emailed(t *testing.T, e *env, email string) (*eventfixture.Account, string, string) {
	t.Helper()
	a := eventfixture.NewAccount(t, e.store.DB(), eventfixture.Setting{})
	return a, sendMail(t, e, a, email), e.tokenFor(t, a.AccountID, auth.GroupFull)
}

// sendMail sends (as the worker records it) an email invite of a new
// event of a to email.
func sendMail(t *testing.T, e *env, a *eventfixture.Account, email string) string {
	t.Helper()
	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: email})
	c, err := e.store.Invites.ClaimSend(t.Context(), invite.KindInvite, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send)
	_, err = e.store.Invites.FinishSend(t.Context(), invite.KindInvite, id, invite.SendResult{SentAt: time.Now()})
	require.NoError(t, err)
	return id
}

// mailStatus is the delivery status the providers reported of event
// id's invite message, as GET /events/{id} shows it; "" before any.
func (e *env) mailStatus(t testing.TB, token, id string) invite.MailOutcome {
	t.Helper()
	inv := e.inviteOf(t, token, id)
	if inv["delivery"] == nil {
		return ""
	}
	d := inv["delivery"].(map[string]any)
	assert.NotEmpty(t, d["provider"])
	assert.Regexp(t, timestampRE, d["at"])
	return invite.MailOutcome(d["status"].(string))
}

// inviteOf is the invite of event id, as GET /events/{id} shows it.
func (e *env) inviteOf(t testing.TB, token, id string) map[string]any {
	t.Helper()
	r := e.do(t, http.MethodGet, "/events/"+id, token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return r.object(t)["invite"].(map[string]any)
}

// withMailEvents serves the providers' routes with p's verifiers (of
// only those named, else of all) and counts into m.
func withMailEvents(t testing.TB, p *mailProviders, m *metrics.Set, only ...string) func(*apiserver.Options) {
	return func(o *apiserver.Options) {
		o.MailEvents = p.verifiers(t, only...)
		o.Metrics = m
	}
}

// scrapeMetrics is m's /metrics text.
func scrapeMetrics(t testing.TB, m *metrics.Set) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return rec.Body.String()
}

// TestMailEventsOfEachProvider: each provider's signed reports, through
// the real server, move the invite's delivery status and suppress the
// address on a bounce or a complaint (shown by GET /suppressions, made
// by the provider), and are counted by provider and outcome.
func TestMailEventsOfEachProvider(t *testing.T) {
	t.Parallel()
	p, m := newMailProviders(t), metrics.New()
	e := newEnv(t, withMailEvents(t, p, m))
	for _, tc := range []struct {
		provider string
		bad      invite.MailOutcome
	}{
		{mailevents.SES, invite.MailBounced},
		{mailevents.SendGrid, invite.MailComplained},
		{mailevents.Postmark, invite.MailBounced},
		{mailevents.Mailgun, invite.MailComplained},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			email := "Jane." + tc.provider + "@Example.com"
			_, id, token := emailed(t, e, email)
			r := e.post(t, p.report(t, tc.provider, id, invite.MailDelivered))
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			want := map[string]any{"reports": 1.0, "unknown": 0.0, "ignored": 0.0}
			if tc.provider == mailevents.SendGrid {
				want["ignored"] = 1.0 // the open beside it
			}
			assert.Equal(t, want, r.object(t))
			assert.Equal(t, invite.MailDelivered, e.mailStatus(t, token, id))
			sups, _ := items(t, e.do(t, http.MethodGet, "/suppressions", token, nil))
			assert.Empty(t, sups, "a delivery suppresses nothing")

			r = e.post(t, p.report(t, tc.provider, id, tc.bad))
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			assert.Equal(t, tc.bad, e.mailStatus(t, token, id))
			sups, _ = items(t, e.do(t, http.MethodGet, "/suppressions", token, nil))
			require.Len(t, sups, 1)
			assert.Equal(t, strings.ToLower(email), sups[0]["address"])
			assert.Equal(t, string(tc.bad), sups[0]["reason"])
			assert.Equal(t, "email", sups[0]["medium"])
			assert.Equal(t, "provider", sups[0]["by"], "put there by the provider's report")
			history := e.inviteOf(t, token, id)["attemptHistory"].([]any)
			require.Len(t, history, 1)
			var outcomes []any
			for _, pe := range history[0].(map[string]any)["providerEvents"].([]any) {
				assert.Equal(t, tc.provider, pe.(map[string]any)["provider"])
				outcomes = append(outcomes, pe.(map[string]any)["outcome"])
			}
			// Oldest first by the provider's time, which the documented
			// samples some tests send carry fixed.
			assert.ElementsMatch(t, []any{string(invite.MailDelivered), string(tc.bad)}, outcomes, "both reports")

			body := scrapeMetrics(t, m)
			for _, o := range []invite.MailOutcome{invite.MailDelivered, tc.bad} {
				assert.Contains(t, body, fmt.Sprintf(`touchpoint_mail_reports_total{outcome=%q,provider=%q} 1`+"\n", o, tc.provider))
			}
		})
	}
}

// TestMailEventsRefused: a forged request of each provider is 401 and
// changes nothing; a spent Mailgun signature carrying a report not
// applied before is 401; each is counted by provider and reason.
func TestMailEventsRefused(t *testing.T) {
	t.Parallel()
	p, m := newMailProviders(t), metrics.New()
	e := newEnv(t, withMailEvents(t, p, m))
	for _, provider := range mailevents.Names() {
		t.Run(provider, func(t *testing.T) {
			_, id, token := emailed(t, e, "forged."+provider+"@example.com")
			r := e.post(t, p.forged(t, p.report(t, provider, id, invite.MailDelivered)))
			p := requireProblem(t, r, http.StatusUnauthorized)
			assert.Contains(t, p["detail"], "does not verify as "+provider+"'s")
			if provider == mailevents.Postmark {
				assert.Contains(t, r.header.Get("WWW-Authenticate"), "Basic")
			}
			assert.Empty(t, e.mailStatus(t, token, id), "nothing changed")
			assert.Contains(t, scrapeMetrics(t, m),
				fmt.Sprintf(`touchpoint_mail_event_refusals_total{provider=%q,reason="signature"} 1`+"\n", provider))
		})
	}

	t.Run("mailgun replay", func(t *testing.T) {
		_, id, token := emailed(t, e, "replayed@example.com")
		req := p.mailgun(t, id, invite.MailDelivered)
		require.Equal(t, http.StatusOK, e.post(t, req).status)
		// The signature covers the timestamp and the token only: the
		// spent token with a report it never carried is a replay.
		var body map[string]any
		require.NoError(t, json.Unmarshal([]byte(req.body), &body))
		body["event-data"].(map[string]any)["id"], body["event-data"].(map[string]any)["event"] = "mg-forged", "complained"
		forged, err := json.Marshal(body)
		require.NoError(t, err)
		requireProblem(t, e.post(t, mailRequest{provider: mailevents.Mailgun, body: string(forged)}), http.StatusUnauthorized)
		assert.Contains(t, scrapeMetrics(t, m), `touchpoint_mail_event_refusals_total{provider="mailgun",reason="replay"} 1`+"\n")
		assert.Equal(t, invite.MailDelivered, e.mailStatus(t, token, id))
		// Signed long ago: refused however new its token.
		old := mailgunSigned(t, testMailgunKey, time.Now().Add(-25*time.Hour), "mg-token-old", map[string]any{"id": "x", "event": "delivered"})
		requireProblem(t, e.post(t, old), http.StatusUnauthorized)
	})

	t.Run("sendgrid stale timestamp", func(t *testing.T) {
		requireProblem(t, e.post(t, p.sendGridSigned(t, `[]`, time.Now().Add(-11*time.Minute))), http.StatusUnauthorized)
	})
}

// TestMailgunRetry: Mailgun retries a webhook it did not see answered
// 2xx for hours, with the token it signed before. The retry of a report
// that was applied is answered 200 and applies nothing twice: one report
// kept, one suppression, one line of its history.
func TestMailgunRetry(t *testing.T) {
	t.Parallel()
	p, m := newMailProviders(t), metrics.New()
	e := newEnv(t, withMailEvents(t, p, m))
	_, id, token := emailed(t, e, "retried@example.com")
	req := p.mailgun(t, id, invite.MailBounced)
	for range 3 {
		r := e.post(t, req)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.Equal(t, map[string]any{"reports": 1.0, "unknown": 0.0, "ignored": 0.0}, r.object(t))
	}
	assert.Equal(t, invite.MailBounced, e.mailStatus(t, token, id))
	history := e.inviteOf(t, token, id)["attemptHistory"].([]any)
	require.Len(t, history, 1)
	assert.Len(t, history[0].(map[string]any)["providerEvents"], 1, "the report is kept once")
	changes, _ := items(t, e.do(t, http.MethodGet, "/suppressions/retried@example.com/history", token, nil))
	assert.Len(t, changes, 1, "suppressed once")
	assert.NotContains(t, scrapeMetrics(t, m), `reason="replay"`)

	// A retry of an event that says nothing of delivery is taken alike.
	opened := mailgunSigned(t, testMailgunKey, time.Now(), "mg-token-opened-"+id, map[string]any{"id": "mg-open-" + id, "event": "opened"})
	for range 2 {
		r := e.post(t, opened)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.EqualValues(t, 1, r.object(t)["ignored"])
	}
}

// TestMailEventsAreLimitedPerAddress: the providers' routes are limited
// per client address (behind a trusted proxy, as it names it), before a
// byte of the body is read or a signature checked: an address over its
// limit gets 429 with Retry-After, another address is answered as ever.
func TestMailEventsAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	p, m := newMailProviders(t), metrics.New()
	e := newEnv(t, withMailEvents(t, p, m), func(o *apiserver.Options) {
		o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		o.ReportRatePerSecond, o.ReportRateBurst = 0.001, 3
	})
	_, id, token := emailed(t, e, "limited@example.com")
	from := func(addr string, req mailRequest) response {
		return e.post(t, mailRequest{provider: req.provider, body: req.body, headers: append(req.headers, header{"X-Forwarded-For", addr})})
	}
	for range 3 {
		requireProblem(t, from("203.0.113.7", p.forged(t, p.report(t, mailevents.Mailgun, id, invite.MailDelivered))), http.StatusUnauthorized)
	}
	r := from("203.0.113.7", p.report(t, mailevents.Mailgun, id, invite.MailBounced))
	requireProblem(t, r, http.StatusTooManyRequests)
	assert.NotEmpty(t, r.header.Get("Retry-After"))
	assert.Empty(t, e.mailStatus(t, token, id), "the limited report was not read")
	// One limit for every provider's route.
	requireProblem(t, from("203.0.113.7", p.report(t, mailevents.Postmark, id, invite.MailBounced)), http.StatusTooManyRequests)

	r = from("198.51.100.9", p.report(t, mailevents.Mailgun, id, invite.MailDelivered))
	require.Equal(t, http.StatusOK, r.status, "another address: %s", r.body)
	assert.Equal(t, invite.MailDelivered, e.mailStatus(t, token, id))
}

// TestMailEventsUnknownMessage: a verified report on a message that is
// not Touchpoint's, or of an event that is gone, is answered 200 (the
// provider would retry anything else for days) and counted.
func TestMailEventsUnknownMessage(t *testing.T) {
	t.Parallel()
	p, m := newMailProviders(t), metrics.New()
	e := newEnv(t, withMailEvents(t, p, m))
	for _, provider := range mailevents.Names() {
		for _, id := range []string{store.NewID("evt"), "not-one-of-ours"} {
			r := e.post(t, p.report(t, provider, id, invite.MailBounced))
			require.Equal(t, http.StatusOK, r.status, "%s: %s", provider, r.body)
			assert.EqualValues(t, 1, r.object(t)["unknown"], provider)
		}
		assert.Contains(t, scrapeMetrics(t, m), fmt.Sprintf(`touchpoint_mail_reports_unknown_total{provider=%q} 2`+"\n", provider))
	}
	assert.NotContains(t, scrapeMetrics(t, m), "touchpoint_mail_reports_total{")
}

// TestMailEventsUnconfigured: without its settings a provider's route is
// 404, and the start says its route is off; an unknown provider is 404
// too, and is not a label of the counters.
func TestMailEventsUnconfigured(t *testing.T) {
	t.Parallel()
	p, m := newMailProviders(t), metrics.New()
	e := newEnv(t, withMailEvents(t, p, m, mailevents.Postmark))
	logs := e.logs.String()
	assert.Contains(t, logs, `"msg":"mail provider reports on","provider":"postmark"`)
	for _, provider := range []string{mailevents.SES, mailevents.SendGrid, mailevents.Mailgun} {
		assert.Contains(t, logs, "mail provider reports off: "+provider+" is not configured")
		r := e.post(t, p.report(t, provider, store.NewID("evt"), invite.MailDelivered))
		assert.Contains(t, requireProblem(t, r, http.StatusNotFound)["detail"], "not configured")
		assert.Contains(t, scrapeMetrics(t, m),
			fmt.Sprintf(`touchpoint_mail_event_refusals_total{provider=%q,reason="unconfigured"} 1`+"\n", provider))
	}
	r := e.post(t, mailRequest{provider: "sparkpost", body: `{}`})
	requireProblem(t, r, http.StatusNotFound)
	assert.NotContains(t, scrapeMetrics(t, m), "sparkpost")
	r = e.do(t, http.MethodGet, "/mail-events/postmark", "", nil)
	requireProblem(t, r, http.StatusMethodNotAllowed)
}

// TestMailEventsSNS: a subscription is confirmed by a GET of its
// SubscribeURL on SNS; a topic not listed is 403; an unreadable body
// of a verified request is 400, a body over the limit 413, and SNS
// unreachable for the certificate 503.
func TestMailEventsSNS(t *testing.T) {
	t.Parallel()
	p, m := newMailProviders(t), metrics.New()
	e := newEnv(t, withMailEvents(t, p, m))

	r := e.post(t, p.snsMessage(t, "SubscriptionConfirmation", "You have chosen to subscribe to the topic "+testSESTopic, nil))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.EqualValues(t, 1, p.subscribed.Load(), "confirmed")
	assert.Contains(t, e.logs.String(), "subscription to "+testSESTopic+" confirmed")

	other := p.snsMessage(t, "Notification", `{"notificationType":"Delivery"}`, func(m map[string]string) {
		m["TopicArn"] = "arn:aws:sns:eu-west-1:999999999999:someone-else"
	})
	assert.Contains(t, requireProblem(t, e.post(t, other), http.StatusForbidden)["detail"], "TOUCHPOINT_SES_TOPIC_ARNS")

	requireProblem(t, e.post(t, p.snsMessage(t, "Notification", `not json`, nil)), http.StatusBadRequest)
	requireProblem(t, e.post(t, p.postmarkAs(testPostmarkUser, testPostmarkPassword, `{"RecordType":`)), http.StatusBadRequest)

	// At most 1 MiB is read before the signature is checked, declared or
	// not.
	big := mailRequest{provider: mailevents.SendGrid, body: "[" + strings.Repeat(" ", 1<<20-1) + "]"}
	requireProblem(t, e.post(t, big), http.StatusRequestEntityTooLarge)
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/mail-events/sendgrid", io.MultiReader(strings.NewReader(big.body)))
	require.NoError(t, err)
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "a body of no declared length")

	p.snsDown.Store(true)
	r = e.post(t, p.snsMessage(t, "Notification", `{"notificationType":"Delivery"}`, func(m map[string]string) {
		m["SigningCertURL"] = p.sns.URL + "/SimpleNotificationService-other.pem" // not cached
	}))
	requireProblem(t, r, http.StatusServiceUnavailable)
	assert.NotEmpty(t, r.header.Get("Retry-After"))

	body := scrapeMetrics(t, m)
	for _, line := range []string{
		`touchpoint_mail_event_refusals_total{provider="ses",reason="topic"} 1`,
		`touchpoint_mail_event_refusals_total{provider="ses",reason="malformed"} 1`,
		`touchpoint_mail_event_refusals_total{provider="postmark",reason="malformed"} 1`,
		`touchpoint_mail_event_refusals_total{provider="sendgrid",reason="too_large"} 2`,
		`touchpoint_mail_event_refusals_total{provider="ses",reason="unavailable"} 1`,
	} {
		assert.Contains(t, body, line+"\n")
	}
}

// TestOpenAPIProviderEnums: every enum of mail providers in the API's
// document (the route's path parameter, the delivery and report schemas,
// the webhook's data) is the registry's list, in its order.
func TestOpenAPIProviderEnums(t *testing.T) {
	t.Parallel()
	d := loadOpenAPI(t)
	var enums [][]any
	var walk func(v any)
	walk = func(v any) {
		switch n := v.(type) {
		case map[string]any:
			if e, ok := n["enum"].([]any); ok && slices.ContainsFunc(e, func(x any) bool { _, ok := mailevents.Lookup(fmt.Sprint(x)); return ok }) {
				enums = append(enums, e)
			}
			for _, c := range n {
				walk(c)
			}
		case []any:
			for _, c := range n {
				walk(c)
			}
		}
	}
	walk(d.root)
	require.GreaterOrEqual(t, len(enums), 4, "the route, the delivery, the report and the webhook's data")
	var want []any
	for _, name := range mailevents.Names() {
		want = append(want, name)
	}
	for _, e := range enums {
		assert.Equal(t, want, e)
	}
}
