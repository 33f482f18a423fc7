// Package mailevents reads what the mail providers report of a message
// after their relay took it — deliveries, bounces, complaints, delays —
// from their event webhooks: Amazon SES through SNS, SendGrid's signed
// Event Webhook, Postmark behind HTTP Basic credentials and Mailgun. For
// each provider it verifies a request the way the provider documents it,
// parses its events and maps each to a Report: the message (event and
// kind, from the Message-ID Touchpoint set or from the metadata it gave
// the provider) and the outcome (invite.MailOutcome).
//
// It knows no SQL and no HTTP status: the store applies the reports, the
// API answers. A request that does not verify is ErrSignature; one that
// verifies but cannot be read is ErrMalformed.
package mailevents

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/text"
)

// Provider names, as routes, metrics and webhooks spell them.
const (
	SES      = "ses"
	SendGrid = "sendgrid"
	Postmark = "postmark"
	Mailgun  = "mailgun"
)

// MetadataKey is the name under which each provider's Tag carries a
// message's ID, and its reports hand it back.
const MetadataKey = "touchpoint-message"

// MaxBody bounds what is read of a request before its signature is
// checked: SendGrid posts its events in batches of up to 768 KB, the
// others one event a request.
const MaxBody = 1 << 20

// Errors. Each is wrapped with what was wrong.
var (
	// ErrSignature: the request is not the provider's (no or a bad
	// signature or credentials, a stale timestamp, a certificate from
	// elsewhere).
	ErrSignature = errors.New("not verified")
	// ErrTopic: an SNS message of a topic that is not listed (refused
	// before its signature is checked: nothing is fetched for it).
	ErrTopic = errors.New("topic not accepted")
	// ErrMalformed: the body is not what the provider sends.
	ErrMalformed = errors.New("malformed")
)

// Report is one event of a provider about one message.
type Report struct {
	Provider string
	// ID names the event at the provider, so a repeated delivery of it is
	// recognised: the store keeps each (Provider, ID) once.
	ID      string
	Outcome invite.MailOutcome
	// EventID and Kind name the message; EventID is "" when the event is
	// about a message that is not Touchpoint's (or names none).
	EventID string
	Kind    invite.Kind
	// Detail is the provider's words (bounce type, diagnostic), with the
	// recipient's address masked; at most MaxDetail bytes.
	Detail string
	// At is when the provider says it happened.
	At time.Time
}

// MaxDetail bounds a report's detail.
const MaxDetail = 500

// Batch is what one verified request carries.
type Batch struct {
	Reports []Report
	// Ignored counts the events that say nothing of delivery (opens,
	// clicks, acceptance by the relay, …).
	Ignored int
	// Nonce is a value the provider signs only once (Mailgun's token),
	// with the time it was signed; "" when the provider has none. The
	// store refuses a nonce it has seen (a replay).
	Nonce     string
	NonceTime time.Time
	// Note says what was done instead of reporting, for the log (an SNS
	// subscription confirmed); "" otherwise.
	Note string
}

// Verifier verifies and reads one provider's requests.
type Verifier interface {
	// Provider is the provider's name.
	Provider() string
	// Read verifies a request by its header and body and returns its
	// reports.
	Read(ctx context.Context, h http.Header, body []byte) (Batch, error)
}

// target fills r's EventID and Kind from the first of refs that is one of
// Touchpoint's message IDs.
func target(r *Report, refs ...string) {
	for _, ref := range refs {
		if ref == "" {
			continue
		}
		if id, reminder, ok := mail.ParseID(ref); ok {
			r.EventID, r.Kind = id, invite.KindInvite
			if reminder {
				r.Kind = invite.KindReminder
			}
			return
		}
	}
}

var emailLike = regexp.MustCompile(`[^\s<>"'(),;:]+@[^\s<>"'(),;:]+`)

// detail joins the provider's words into a report's detail: addresses
// masked (diagnostics echo the recipient), one clean line
// (text.Diagnostic), at most MaxDetail bytes.
func detail(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p = text.Clean(text.Diagnostic, p); p != "" {
			kept = append(kept, p)
		}
	}
	s := emailLike.ReplaceAllStringFunc(strings.Join(kept, ": "), mail.MaskEmail)
	if len(s) > MaxDetail {
		s = s[:MaxDetail]
		for !utf8Valid(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}
