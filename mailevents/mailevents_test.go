package mailevents_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mailevents"
)

const (
	eventID    = "evt-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b"
	messageID  = "<" + eventID + "@shop.example>"
	reminderID = eventID + ".reminder"
)

var now = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

// The Mailgun payloads follow the examples of Mailgun's webhook
// documentation (delivered, failed permanent/temporary, complained),
// with the message's ID and variables set as Touchpoint sets them.
func mailgunBody(t testing.TB, key string, ts int64, token string, event map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"signature":  map[string]any{"timestamp": strconv.FormatInt(ts, 10), "token": token, "signature": mailevents.SignMailgun(key, ts, token)},
		"event-data": event,
	})
	require.NoError(t, err)
	return b
}

func mailgunEvent(event, severity string) map[string]any {
	return map[string]any{
		"id": "CPgfbmQMTCKtHW6uIWtuVe", "timestamp": 1521472262.908181, "log-level": "error", "event": event,
		"severity": severity, "reason": "bounce", "recipient": "alice@example.com",
		"delivery-status": map[string]any{"code": 550, "message": "5.1.1 The email account that you tried to reach does not exist <alice@example.com>",
			"description": "", "attempt-no": 1},
		"message":        map[string]any{"headers": map[string]any{"to": "Alice <alice@example.com>", "message-id": eventID + "@shop.example", "subject": "Test"}},
		"user-variables": map[string]any{"touchpoint-message": reminderID},
	}
}

func TestMailgun(t *testing.T) {
	t.Parallel()
	v := mailevents.MailgunVerifier{SigningKey: "key-3ax6xnjp29jd6fds4gc373sgvjxteol0", Now: clock}
	ts := now.Add(-time.Minute).Unix()
	tests := []struct {
		event, severity string
		want            invite.MailOutcome
	}{
		{"delivered", "", invite.MailDelivered},
		{"failed", "permanent", invite.MailBounced},
		{"failed", "temporary", invite.MailDeferred},
		{"complained", "", invite.MailComplained},
	}
	for _, tc := range tests {
		b, err := v.Read(context.Background(), nil, mailgunBody(t, v.SigningKey, ts, "tok-"+tc.event+tc.severity, mailgunEvent(tc.event, tc.severity)))
		require.NoError(t, err, tc.event)
		require.Len(t, b.Reports, 1)
		r := b.Reports[0]
		assert.Equal(t, tc.want, r.Outcome, tc.event)
		assert.Equal(t, "tok-"+tc.event+tc.severity, b.Nonce, "the token is the nonce")
		assert.Equal(t, eventID, r.EventID)
		assert.Equal(t, invite.KindReminder, r.Kind, "the variable wins over the Message-ID")
		assert.Equal(t, "CPgfbmQMTCKtHW6uIWtuVe", r.ID)
		assert.Equal(t, int64(1521472262), r.At.Unix())
		assert.NotContains(t, r.Detail, "alice@example.com", "addresses are masked")
	}
	b, err := v.Read(context.Background(), nil, mailgunBody(t, v.SigningKey, ts, "tok-open", map[string]any{"event": "opened", "id": "x"}))
	require.NoError(t, err)
	assert.Empty(t, b.Reports)
	assert.Equal(t, 1, b.Ignored)

	// Without the variable, the Message-ID names the invite.
	ev := mailgunEvent("delivered", "")
	delete(ev, "user-variables")
	b, err = v.Read(context.Background(), nil, mailgunBody(t, v.SigningKey, ts, "tok-mid", ev))
	require.NoError(t, err)
	assert.Equal(t, invite.KindInvite, b.Reports[0].Kind)
	assert.Equal(t, eventID, b.Reports[0].EventID)

	// Forged, stale, future, missing signatures.
	refused := map[string][]byte{
		"forged":       mailgunBody(t, "not the key", ts, "tok", mailgunEvent("failed", "permanent")),
		"stale":        mailgunBody(t, v.SigningKey, now.Add(-mailevents.MailgunWindow-time.Minute).Unix(), "tok", mailgunEvent("delivered", "")),
		"future":       mailgunBody(t, v.SigningKey, now.Add(time.Hour).Unix(), "tok", mailgunEvent("delivered", "")),
		"no signature": []byte(`{"event-data":{"event":"delivered"}}`),
		"not JSON":     []byte(`<xml/>`),
	}
	for name, body := range refused {
		_, err := v.Read(context.Background(), nil, body)
		assert.ErrorIs(t, err, mailevents.ErrSignature, name)
	}
	// The signature covers the timestamp and the token joined: a
	// timestamp spelt any other way than in digits would move the
	// boundary between them, and a spent token (here "e0tok") would come
	// back as a new one ("tok") under the same signature.
	spent := mailgunBody(t, v.SigningKey, ts, "e0tok", mailgunEvent("delivered", ""))
	b, err = v.Read(context.Background(), nil, spent)
	require.NoError(t, err)
	assert.Equal(t, "e0tok", b.Nonce)
	stamp := strconv.FormatInt(ts, 10)
	for _, moved := range []struct{ timestamp, token string }{
		{stamp + "e0", "tok"}, {stamp + "e", "0tok"}, {stamp + ".", "e0tok"}, {" " + stamp, "e0tok"}, {"+" + stamp, "e0tok"},
	} {
		body := []byte(strings.Replace(string(spent), `"timestamp":"`+stamp+`","token":"e0tok"`,
			`"timestamp":"`+moved.timestamp+`","token":"`+moved.token+`"`, 1))
		require.NotEqual(t, spent, body)
		_, err := v.Read(context.Background(), nil, body)
		assert.ErrorIs(t, err, mailevents.ErrSignature, "%q", moved.timestamp)
	}

	// A signed body whose event changed after signing is still Mailgun's
	// own signature: the token and timestamp are what it covers, and the
	// token can be used once only (the store's part).
	_, err = v.Read(context.Background(), nil, []byte(`{"signature":`+
		`{"timestamp":"`+strconv.FormatInt(ts, 10)+`","token":"t","signature":"`+mailevents.SignMailgun(v.SigningKey, ts, "t")+`"}}`))
	assert.ErrorIs(t, err, mailevents.ErrMalformed, "no event-data")
}

// The Postmark payloads are the examples of Postmark's webhook
// documentation (bounce, delivery, spam complaint) with the metadata
// Touchpoint sets.
const postmarkBounce = `{
  "RecordType": "Bounce", "MessageStream": "outbound", "ID": 4323372036854775807, "Type": "HardBounce",
  "TypeCode": 1, "Name": "Hard bounce", "Tag": "Invitation", "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
  "Metadata": {"touchpoint-message": "` + eventID + `"}, "ServerID": 23, "Description": "The server was unable to deliver your message (ex: unknown user, mailbox not found).",
  "Details": "smtp;550 5.1.1 The email account that you tried to reach does not exist <john@example.com>",
  "Email": "john@example.com", "From": "sender@example.com", "BouncedAt": "2019-11-05T16:33:54.9070259Z",
  "DumpAvailable": true, "Inactive": true, "CanActivate": true, "Subject": "Test subject"}`

const postmarkSoftBounce = `{"RecordType": "Bounce", "ID": 42, "Type": "SoftBounce", "TypeCode": 4096,
  "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483", "Metadata": {"touchpoint-message": "` + eventID + `"},
  "Description": "The server could not temporarily deliver your message", "Details": "Mailbox full",
  "Email": "john@example.com", "BouncedAt": "2019-11-05T16:33:54Z"}`

const postmarkDelivery = `{
  "RecordType": "Delivery", "ServerID": 23, "MessageStream": "outbound", "MessageID": "00000000-0000-0000-0000-000000000000",
  "Recipient": "john@example.com", "Tag": "welcome-email", "DeliveredAt": "2019-11-05T16:33:54.9070259Z",
  "Details": "Test delivery webhook details", "Metadata": {"touchpoint-message": "` + reminderID + `"}}`

const postmarkComplaint = `{
  "RecordType": "SpamComplaint", "MessageStream": "outbound", "ID": 42, "Type": "SpamComplaint", "TypeCode": 512,
  "Name": "Spam complaint", "Tag": "Test", "MessageID": "00000000-0000-0000-0000-000000000000",
  "Metadata": {"touchpoint-message": "` + eventID + `"}, "ServerID": 1234, "Description": "", "Details": "Test spam complaint details",
  "Email": "john@example.com", "From": "sender@example.com", "BouncedAt": "2019-11-05T16:33:54.9070259Z",
  "DumpAvailable": true, "Inactive": true, "CanActivate": false, "Subject": "Test subject"}`

func TestPostmark(t *testing.T) {
	t.Parallel()
	v := mailevents.PostmarkVerifier{User: "postmark", Password: "s3cret-pass"}
	auth := func(user, password string) http.Header {
		r, _ := http.NewRequest(http.MethodPost, "/", nil)
		r.SetBasicAuth(user, password)
		return r.Header
	}
	good := auth("postmark", "s3cret-pass")
	tests := []struct {
		name, body string
		want       invite.MailOutcome
		kind       invite.Kind
	}{
		{"hard bounce", postmarkBounce, invite.MailBounced, invite.KindInvite},
		{"soft bounce", postmarkSoftBounce, invite.MailDeferred, invite.KindInvite},
		{"delivery", postmarkDelivery, invite.MailDelivered, invite.KindReminder},
		{"spam complaint", postmarkComplaint, invite.MailComplained, invite.KindInvite},
	}
	ids := map[string]bool{}
	for _, tc := range tests {
		b, err := v.Read(context.Background(), good, []byte(tc.body))
		require.NoError(t, err, tc.name)
		require.Len(t, b.Reports, 1, tc.name)
		r := b.Reports[0]
		assert.Equal(t, tc.want, r.Outcome, tc.name)
		assert.Equal(t, eventID, r.EventID, tc.name)
		assert.Equal(t, tc.kind, r.Kind, tc.name)
		assert.False(t, ids[r.ID], "%s: IDs differ between records", tc.name)
		ids[r.ID] = true
		assert.Equal(t, 2019, r.At.Year())
		assert.NotContains(t, r.Detail, "john@example.com")
	}
	for name, h := range map[string]http.Header{
		"no credentials": {}, "wrong password": auth("postmark", "guess"), "wrong user": auth("admin", "s3cret-pass"),
	} {
		_, err := v.Read(context.Background(), h, []byte(postmarkBounce))
		assert.ErrorIs(t, err, mailevents.ErrSignature, name)
	}
	b, err := v.Read(context.Background(), good, []byte(`{"RecordType":"Open","MessageID":"x"}`))
	require.NoError(t, err)
	assert.Equal(t, 1, b.Ignored)
	// Not Touchpoint's message: a report without an event.
	b, err = v.Read(context.Background(), good, []byte(strings.Replace(postmarkBounce, eventID, "someone-else's", 1)))
	require.NoError(t, err)
	assert.Empty(t, b.Reports[0].EventID)
	for _, bad := range []string{`[]`, `{}`, `{"RecordType":"Bounce"}`, `{"RecordType":"Delivery","MessageID":"x","DeliveredAt":"yesterday"}`} {
		_, err := v.Read(context.Background(), good, []byte(bad))
		assert.ErrorIs(t, err, mailevents.ErrMalformed, bad)
	}
}

// sendGridEvents follows the example of SendGrid's Event Webhook
// documentation, one event of each kind, with the unique argument
// Touchpoint sets on some and the smtp-id on all.
func sendGridEvents(ts int64) string {
	ev := func(id, event string, extra string) string {
		return `{"email":"example@test.com","timestamp":` + strconv.FormatInt(ts, 10) + `,"smtp-id":"` + messageID + `",` +
			`"event":"` + event + `","category":["cat facts"],"sg_event_id":"` + id + `",` +
			`"sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0"` + extra + `}`
	}
	return "[" + strings.Join([]string{
		ev("sg-processed", "processed", ""),
		ev("sg-deferred", "deferred", `,"response":"400 try again later <example@test.com>","attempt":"5"`),
		ev("sg-delivered", "delivered", `,"response":"250 OK","touchpoint-message":"`+reminderID+`"`),
		ev("sg-open", "open", `,"useragent":"Mozilla/4.0","ip":"255.255.255.255"`),
		ev("sg-bounce", "bounce", `,"reason":"500 unknown recipient","status":"5.0.0","type":"bounce"`),
		ev("sg-blocked", "bounce", `,"reason":"550 IP blocked","status":"5.0.0","type":"blocked"`),
		ev("sg-dropped", "dropped", `,"reason":"Bounced Address","status":"5.0.0"`),
		ev("sg-spam", "spamreport", ""),
	}, ",") + "]"
}

func TestSendGrid(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	require.NoError(t, err)
	v, err := mailevents.NewSendGridVerifier(base64.StdEncoding.EncodeToString(der))
	require.NoError(t, err)
	v.Now = clock
	sign := func(k *ecdsa.PrivateKey, ts, body string) http.Header {
		d := sha256.Sum256([]byte(ts + body))
		sig, err := ecdsa.SignASN1(rand.Reader, k, d[:])
		require.NoError(t, err)
		h := http.Header{}
		h.Set(mailevents.SendGridSignatureHeader, base64.StdEncoding.EncodeToString(sig))
		h.Set(mailevents.SendGridTimestampHeader, ts)
		return h
	}
	ts := strconv.FormatInt(now.Add(-time.Minute).Unix(), 10)
	body := sendGridEvents(now.Add(-2 * time.Minute).Unix())
	b, err := v.Read(context.Background(), sign(key, ts, body), []byte(body))
	require.NoError(t, err)
	assert.Equal(t, 2, b.Ignored, "processed and open")
	got := map[string]invite.MailOutcome{}
	for _, r := range b.Reports {
		got[r.ID] = r.Outcome
		assert.Equal(t, eventID, r.EventID, r.ID)
		assert.NotContains(t, r.Detail, "example@test.com", r.ID)
		if r.ID == "sg-delivered" {
			assert.Equal(t, invite.KindReminder, r.Kind, "the unique argument names the reminder")
		} else {
			assert.Equal(t, invite.KindInvite, r.Kind, r.ID)
		}
	}
	assert.Equal(t, map[string]invite.MailOutcome{"sg-deferred": invite.MailDeferred, "sg-delivered": invite.MailDelivered,
		"sg-bounce": invite.MailBounced, "sg-blocked": invite.MailDeferred, "sg-dropped": invite.MailBounced,
		"sg-spam": invite.MailComplained}, got)

	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	stale := strconv.FormatInt(now.Add(-mailevents.SendGridWindow-time.Second).Unix(), 10)
	for name, c := range map[string]struct {
		h    http.Header
		body string
	}{
		"forged":       {sign(other, ts, body), body},
		"body changed": {sign(key, ts, body), strings.Replace(body, "bounce", "delivered", 1)},
		"timestamp moved": {func() http.Header {
			h := sign(key, ts, body)
			h.Set(mailevents.SendGridTimestampHeader, stale)
			return h
		}(), body},
		"stale":           {sign(key, stale, body), body},
		"unsigned":        {http.Header{}, body},
		"not digits":      {sign(key, ts+"e0", body), body},
		"with a fraction": {sign(key, ts+".0", body), body},
	} {
		_, err := v.Read(context.Background(), c.h, []byte(c.body))
		assert.ErrorIs(t, err, mailevents.ErrSignature, name)
	}
	_, err = v.Read(context.Background(), sign(key, ts, `{"event":"delivered"}`), []byte(`{"event":"delivered"}`))
	assert.ErrorIs(t, err, mailevents.ErrMalformed)

	for _, bad := range []string{"", "not base64!", base64.StdEncoding.EncodeToString([]byte("not DER"))} {
		_, err := mailevents.NewSendGridVerifier(bad)
		assert.Error(t, err, bad)
	}
}
