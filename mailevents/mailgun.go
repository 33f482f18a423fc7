package mailevents

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/touchpoint/touchpoint/internal/settings"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mail"
)

// mailgunProvider is Mailgun's webhooks as the registry knows them.
var mailgunProvider = Provider{
	Name:     Mailgun,
	Settings: []settings.Var{{Name: "TOUCHPOINT_MAILGUN_SIGNING_KEY", Secret: true}},
	Verifier: func(get func(string) string) (Verifier, error) {
		if key := get("TOUCHPOINT_MAILGUN_SIGNING_KEY"); key != "" {
			return MailgunVerifier{SigningKey: key}, nil
		}
		return nil, nil
	},
	// Mailgun's variables, which its events carry as user-variables.
	Tag: mail.Tag{Header: "X-Mailgun-Variables", Value: func(id string) string { return `{"` + MetadataKey + `":"` + id + `"}` }},
}

// MailgunVerifier reads Mailgun's webhooks: a JSON body whose signature
// object holds a timestamp, a random token and the HMAC-SHA256, keyed
// with the webhook signing key, of the timestamp followed by the token.
// Each token is taken once (Batch.Nonce); a timestamp older than
// MailgunWindow, or further ahead than the clocks may differ, is
// refused, so the tokens need be kept only that long. The timestamp is
// digits only: the signature covers the text of timestamp and token
// joined, so any other spelling of the time would move the boundary
// between them and make a spent token a new one.
type MailgunVerifier struct {
	SigningKey string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// MailgunWindow is how old a signed timestamp may be; the tokens seen are
// kept as long. Mailgun retries a webhook it could not deliver for 8
// hours.
const MailgunWindow = 24 * time.Hour

// clockSkew is how far ahead of our clock a signed timestamp may be.
const clockSkew = 5 * time.Minute

// Provider is "mailgun".
func (MailgunVerifier) Provider() string { return Mailgun }

type mailgunBody struct {
	Signature *struct {
		Timestamp string `json:"timestamp"`
		Token     string `json:"token"`
		Signature string `json:"signature"`
	} `json:"signature"`
	EventData *struct {
		ID        string          `json:"id"`
		Event     string          `json:"event"`
		Severity  string          `json:"severity"`
		Reason    string          `json:"reason"`
		Timestamp json.Number     `json:"timestamp"`
		Message   json.RawMessage `json:"message"`
		// UserVariables holds X-Mailgun-Variables.
		UserVariables  map[string]any `json:"user-variables"`
		DeliveryStatus struct {
			Code        json.Number `json:"code"`
			Message     string      `json:"message"`
			Description string      `json:"description"`
		} `json:"delivery-status"`
	} `json:"event-data"`
}

// Read verifies the signature and reads the one event of the request.
func (v MailgunVerifier) Read(_ context.Context, _ http.Header, body []byte) (Batch, error) {
	var b mailgunBody
	if err := json.Unmarshal(body, &b); err != nil {
		return Batch{}, fmt.Errorf("%w: the body is not Mailgun's JSON", ErrSignature)
	}
	sig := b.Signature
	if sig == nil || sig.Token == "" || sig.Signature == "" {
		return Batch{}, fmt.Errorf("%w: no signature", ErrSignature)
	}
	if len(sig.Token) > 200 {
		return Batch{}, fmt.Errorf("%w: the token is too long", ErrSignature)
	}
	mac := hmac.New(sha256.New, []byte(v.SigningKey))
	mac.Write([]byte(sig.Timestamp + sig.Token))
	if !equal(hex.EncodeToString(mac.Sum(nil)), sig.Signature) {
		return Batch{}, fmt.Errorf("%w: the signature does not match", ErrSignature)
	}
	ts, ok := signedSeconds(sig.Timestamp)
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	if !ok || ts.Before(now.Add(-MailgunWindow)) || ts.After(now.Add(clockSkew)) {
		return Batch{}, fmt.Errorf("%w: the signed timestamp is outside %s of now", ErrSignature, MailgunWindow)
	}
	batch := Batch{Nonce: sig.Token, NonceTime: ts}
	ev := b.EventData
	if ev == nil {
		return Batch{}, fmt.Errorf("%w: no event-data", ErrMalformed)
	}
	r := Report{Provider: Mailgun, ID: ev.ID}
	switch {
	case ev.Event == "delivered":
		r.Outcome = invite.MailDelivered
	case ev.Event == "complained":
		r.Outcome = invite.MailComplained
	case ev.Event == "failed" && ev.Severity == "permanent":
		r.Outcome = invite.MailBounced
	case ev.Event == "failed":
		r.Outcome = invite.MailDeferred
	default: // accepted, opened, clicked, unsubscribed, stored, …
		batch.Ignored++
		return batch, nil
	}
	if ev.ID == "" {
		return Batch{}, fmt.Errorf("%w: the event has no id", ErrMalformed)
	}
	if at, ok := unixSeconds(ev.Timestamp.String()); ok {
		r.At = at
	} else {
		r.At = ts
	}
	var msg struct {
		Headers struct {
			MessageID string `json:"message-id"`
		} `json:"headers"`
	}
	if len(ev.Message) > 0 {
		if err := json.Unmarshal(ev.Message, &msg); err != nil {
			return Batch{}, fmt.Errorf("%w: event-data.message", ErrMalformed)
		}
	}
	ref, _ := ev.UserVariables[MetadataKey].(string)
	target(&r, ref, msg.Headers.MessageID)
	code := ev.DeliveryStatus.Code.String()
	if code == "0" {
		code = ""
	}
	if r.Outcome == invite.MailBounced || r.Outcome == invite.MailDeferred {
		r.Detail = detail(ev.Severity+" "+ev.Reason, code, ev.DeliveryStatus.Message, ev.DeliveryStatus.Description)
	}
	batch.Reports = []Report{r}
	return batch, nil
}

// SignMailgun is how Mailgun signs: the hex HMAC-SHA256 of timestamp and
// token. Tests and tools sign with it.
func SignMailgun(key string, timestamp int64, token string) string {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(strconv.FormatInt(timestamp, 10) + token))
	return hex.EncodeToString(mac.Sum(nil))
}
