package mailevents

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/internal/settings"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mail"
)

// SendGrid's signed Event Webhook: an ECDSA signature (P-256, SHA-256,
// ASN.1, base64) over the timestamp header followed by the body.
const (
	SendGridSignatureHeader = "X-Twilio-Email-Event-Webhook-Signature"
	SendGridTimestampHeader = "X-Twilio-Email-Event-Webhook-Timestamp"
)

// sendGridProvider is SendGrid's signed Event Webhook as the registry
// knows it.
var sendGridProvider = Provider{
	Name:     SendGrid,
	Settings: []settings.Var{{Name: "TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY"}},
	Verifier: func(get func(string) string) (Verifier, error) {
		key := get("TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY")
		if key == "" {
			return nil, nil
		}
		v, err := NewSendGridVerifier(key)
		if err != nil {
			return nil, fmt.Errorf("TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY: %w", err)
		}
		return v, nil
	},
	// SendGrid's unique arguments, which each of its events repeats.
	Tag: mail.Tag{Header: "X-SMTPAPI", Value: func(id string) string { return `{"unique_args":{"` + MetadataKey + `":"` + id + `"}}` }},
}

// SendGridWindow is how old a signed timestamp may be.
const SendGridWindow = 10 * time.Minute

// SendGridVerifier reads SendGrid's Event Webhook. The message is named
// by the unique argument Touchpoint set (its Tag), else by
// the Message-ID SendGrid reports as smtp-id.
type SendGridVerifier struct {
	key *ecdsa.PublicKey
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// NewSendGridVerifier reads the verification key as SendGrid shows it:
// base64 of the DER-encoded public key.
func NewSendGridVerifier(publicKey string) (*SendGridVerifier, error) {
	der, err := base64.StdEncoding.DecodeString(strings.TrimSpace(publicKey))
	if err != nil {
		return nil, errors.New("the SendGrid verification key is not base64")
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, errors.New("the SendGrid verification key is not a DER public key")
	}
	ec, ok := k.(*ecdsa.PublicKey)
	if !ok {
		return nil, errors.New("the SendGrid verification key is not an ECDSA key")
	}
	return &SendGridVerifier{key: ec}, nil
}

// Provider is "sendgrid".
func (*SendGridVerifier) Provider() string { return SendGrid }

// Read verifies the signature and the timestamp and reads the events.
func (v *SendGridVerifier) Read(_ context.Context, h http.Header, body []byte) (Batch, error) {
	sig, err := base64.StdEncoding.DecodeString(h.Get(SendGridSignatureHeader))
	if err != nil || len(sig) == 0 {
		return Batch{}, fmt.Errorf("%w: no %s", ErrSignature, SendGridSignatureHeader)
	}
	stamp := h.Get(SendGridTimestampHeader)
	digest := sha256.Sum256(append([]byte(stamp), body...))
	if !ecdsa.VerifyASN1(v.key, digest[:], sig) {
		return Batch{}, fmt.Errorf("%w: the signature does not match", ErrSignature)
	}
	ts, ok := signedSeconds(stamp)
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	if !ok || ts.Before(now.Add(-SendGridWindow)) || ts.After(now.Add(clockSkew)) {
		return Batch{}, fmt.Errorf("%w: the signed timestamp is older than %s", ErrSignature, SendGridWindow)
	}
	var events []map[string]any
	if err := json.Unmarshal(body, &events); err != nil {
		return Batch{}, fmt.Errorf("%w: the body is not a JSON array of events", ErrMalformed)
	}
	var batch Batch
	for i, e := range events {
		str := func(k string) string { s, _ := e[k].(string); return s }
		r := Report{Provider: SendGrid, ID: str("sg_event_id")}
		reason := str("reason")
		switch event := str("event"); {
		case event == "delivered":
			r.Outcome = invite.MailDelivered
		case event == "spamreport":
			r.Outcome = invite.MailComplained
		case event == "bounce" && str("type") == "blocked":
			// Refused for reasons of the sender (its IP, its content), not
			// of the address.
			r.Outcome, r.Detail = invite.MailDeferred, detail("blocked", str("status"), reason)
		case event == "bounce":
			r.Outcome, r.Detail = invite.MailBounced, detail("bounce", str("status"), reason)
		case event == "deferred":
			r.Outcome, r.Detail = invite.MailDeferred, detail("deferred", str("response"))
		case event == "dropped" && (reason == "Bounced Address" || reason == "Invalid"):
			r.Outcome, r.Detail = invite.MailBounced, detail("dropped", reason)
		case event == "dropped" && reason == "Spam Reporting Address":
			r.Outcome, r.Detail = invite.MailComplained, detail("dropped", reason)
		case event == "dropped":
			r.Outcome, r.Detail = invite.MailDeferred, detail("dropped", reason)
		default: // processed, open, click, unsubscribe, group_*
			batch.Ignored++
			continue
		}
		if r.ID == "" {
			return Batch{}, fmt.Errorf("%w: event %d has no sg_event_id", ErrMalformed, i)
		}
		switch t := e["timestamp"].(type) {
		case float64:
			r.At, _ = unixSeconds(strconv.FormatFloat(t, 'f', -1, 64))
		case string:
			r.At, _ = unixSeconds(t)
		}
		if r.At.IsZero() {
			r.At = ts
		}
		target(&r, str(MetadataKey), str("smtp-id"))
		batch.Reports = append(batch.Reports, r)
	}
	return batch, nil
}
