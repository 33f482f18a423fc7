package mailevents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/touchpoint/touchpoint/internal/settings"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mail"
)

// postmarkProvider is Postmark's webhooks as the registry knows them.
var postmarkProvider = Provider{
	Name: Postmark,
	Settings: []settings.Var{{Name: "TOUCHPOINT_POSTMARK_WEBHOOK_USER"},
		{Name: "TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD", Secret: true}},
	Verifier: func(get func(string) string) (Verifier, error) {
		user, password := get("TOUCHPOINT_POSTMARK_WEBHOOK_USER"), get("TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD")
		switch {
		case user == "" && password == "":
			return nil, nil
		case user == "" || password == "":
			return nil, errors.New("TOUCHPOINT_POSTMARK_WEBHOOK_USER and TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD: set both or neither")
		}
		return PostmarkVerifier{User: user, Password: password}, nil
	},
	// Postmark's metadata: it gives every message an ID of its own.
	Tag: mail.Tag{Header: "X-PM-Metadata-" + MetadataKey, Value: func(id string) string { return id }},
	// The credentials ride in the webhook's URL.
	Challenge: `Basic realm="mail-events", charset="UTF-8"`,
}

// PostmarkVerifier reads Postmark's webhooks, which Postmark authenticates
// with the HTTP Basic credentials written into the webhook's URL. Postmark
// gives every message an ID of its own, so the message is named by the
// metadata Touchpoint set on it (its Tag).
type PostmarkVerifier struct {
	User, Password string
}

// Provider is "postmark".
func (PostmarkVerifier) Provider() string { return Postmark }

type postmarkBody struct {
	RecordType  string         `json:"RecordType"`
	ID          json.Number    `json:"ID"`
	Type        string         `json:"Type"`
	MessageID   string         `json:"MessageID"`
	Description string         `json:"Description"`
	Details     string         `json:"Details"`
	BouncedAt   string         `json:"BouncedAt"`
	DeliveredAt string         `json:"DeliveredAt"`
	Metadata    map[string]any `json:"Metadata"`
}

// postmarkHard are the bounce types that say the address can never be
// reached; the others (soft bounces, transient failures, auto-replies,
// DNS errors, …) change nothing but the attempt's record.
var postmarkHard = map[string]bool{"HardBounce": true, "BadEmailAddress": true, "ManuallyDeactivated": true}

// Read checks the credentials and reads the one event of the request.
func (v PostmarkVerifier) Read(_ context.Context, h http.Header, body []byte) (Batch, error) {
	r := &http.Request{Header: h}
	user, password, ok := r.BasicAuth()
	if !ok {
		return Batch{}, fmt.Errorf("%w: no Basic credentials", ErrSignature)
	}
	// Both compared, always: the time taken says nothing of which failed.
	if okUser, okPassword := equal(user, v.User), equal(password, v.Password); !okUser || !okPassword {
		return Batch{}, fmt.Errorf("%w: wrong credentials", ErrSignature)
	}
	var b postmarkBody
	if err := json.Unmarshal(body, &b); err != nil {
		return Batch{}, fmt.Errorf("%w: the body is not Postmark's JSON", ErrMalformed)
	}
	rep := Report{Provider: Postmark}
	at := b.BouncedAt
	switch b.RecordType {
	case "Delivery":
		rep.Outcome, at = invite.MailDelivered, b.DeliveredAt
	case "SpamComplaint":
		rep.Outcome = invite.MailComplained
	case "Bounce":
		rep.Outcome = invite.MailDeferred
		if postmarkHard[b.Type] {
			rep.Outcome = invite.MailBounced
		}
		rep.Detail = detail(b.Type, b.Description, b.Details)
	case "":
		return Batch{}, fmt.Errorf("%w: no RecordType", ErrMalformed)
	default: // Open, Click, SubscriptionChange, Inbound
		return Batch{Ignored: 1}, nil
	}
	if b.MessageID == "" {
		return Batch{}, fmt.Errorf("%w: no MessageID", ErrMalformed)
	}
	// A delivery has no ID of its own; a bounce and a complaint have one.
	rep.ID = b.RecordType + ":" + b.MessageID
	if id := b.ID.String(); id != "" && id != "0" {
		rep.ID += ":" + id
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return Batch{}, fmt.Errorf("%w: the time %s", ErrMalformed, strconv.Quote(at))
	}
	rep.At = t.UTC()
	ref, _ := b.Metadata[MetadataKey].(string)
	target(&rep, ref)
	return Batch{Reports: []Report{rep}}, nil
}
