package sms

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/touchpoint/touchpoint/invite"
)

// The provider's callbacks: delivery updates of the messages Touchpoint
// sent, and messages customers send back. They carry no token: the
// provider signs each one (X-Twilio-Signature, an HMAC keyed with the
// auth token over the URL it called and the form), and that signature is
// all that authorises them. They are not rate limited per address, as the
// pages are: every one comes from the provider's few addresses, and a
// forged one costs an HMAC. The API mounts them on the routes of its
// route table.

// StatusPath and InboundPath are where the API serves the callbacks.
const (
	StatusPath  = "/sms/status"
	InboundPath = "/sms/inbound"
)

// CallbackKeys is what verifies the provider's callbacks.
type CallbackKeys struct {
	// AuthToken is the provider's auth token, which signs its callbacks.
	AuthToken string
	// StatusURL and InboundURL are the public URLs of POST /sms/status and
	// POST /sms/inbound exactly as the provider calls them
	// (TOUCHPOINT_SMS_STATUS_CALLBACK_URL and {base_url}/sms/inbound).
	// The signature covers the URL, so it is checked against these —
	// behind a proxy the request's own Host and scheme differ, and they
	// are the caller's to choose.
	StatusURL, InboundURL string
}

// CallbackStore is what the callbacks need of the store.
type CallbackStore interface {
	RecordSMSDelivery(ctx context.Context, d invite.SMSReport) (bool, error)
	SuppressTextedNumber(ctx context.Context, number string, reason invite.SuppressionReason) (int, error)
}

// CallbackOptions are the callbacks' dependencies.
type CallbackOptions struct {
	// Keys verify the callbacks; nil: no provider is configured, and every
	// callback is refused (403), since none can be verified.
	Keys  *CallbackKeys
	Store CallbackStore // required
	// Logger gets a line per callback acted on; nil discards.
	Logger *slog.Logger
	// Fail answers an error: a *CallbackError with its status and text,
	// anything else as an internal failure whose text the caller never
	// sees. Required: the API answers them all alike.
	Fail func(w http.ResponseWriter, r *http.Request, err error)
}

// CallbackError is a callback refused: the status and the text the
// provider is answered with.
type CallbackError struct {
	Status int
	Detail string
}

func (e *CallbackError) Error() string { return e.Detail }

// HTTPStatus is the status of the answer.
func (e *CallbackError) HTTPStatus() int { return e.Status }

func refuse(status int, format string, args ...any) *CallbackError {
	return &CallbackError{Status: status, Detail: fmt.Sprintf(format, args...)}
}

// Callbacks serves the provider's callbacks: ServeStatus and ServeInbound
// are the handlers the API mounts.
type Callbacks struct {
	o CallbackOptions
}

// NewCallbacks builds the callbacks' handlers. It panics without a Store
// or Fail, which is a wiring mistake.
func NewCallbacks(o CallbackOptions) *Callbacks {
	if o.Store == nil || o.Fail == nil {
		panic("sms.NewCallbacks: Store and Fail are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	return &Callbacks{o: o}
}

// maxCallbackBody bounds a callback's form: a status update is a few
// hundred bytes, an incoming message at most 1,600 characters of text
// with some thirty parameters.
const maxCallbackBody = 64 << 10

// emptyTwiML answers an incoming message without replying to it: the
// provider (or its messaging service) sends its own opt-out confirmation.
const emptyTwiML = `<?xml version="1.0" encoding="UTF-8"?><Response/>`

// form reads a callback's form and checks its signature over publicURL
// with the query the provider called it with. Without a provider nothing
// can be verified: 403.
func (c *Callbacks) form(w http.ResponseWriter, r *http.Request, publicURL func(CallbackKeys) string) (url.Values, error) {
	if c.o.Keys == nil {
		return nil, refuse(http.StatusForbidden, "no SMS provider is configured, so no callback can be verified")
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, refuse(http.StatusUnsupportedMediaType, "Content-Type must be application/x-www-form-urlencoded")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxCallbackBody)
	if err := r.ParseForm(); err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return nil, refuse(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", maxCallbackBody)
		}
		return nil, refuse(http.StatusBadRequest, "the body is not a form")
	}
	if !ValidateSignature(c.o.Keys.AuthToken, signedURL(publicURL(*c.o.Keys), r.URL.RawQuery), r.PostForm, r.Header.Get(SignatureHeader)) {
		return nil, refuse(http.StatusForbidden, "the %s header does not verify", SignatureHeader)
	}
	return r.PostForm, nil
}

// signedURL is the URL the provider signed: the configured public URL
// with the query of the request (which holds the configured URL's own
// query, if any, and what Touchpoint added per message).
func signedURL(public, rawQuery string) string {
	public, _, _ = strings.Cut(public, "#")
	public, _, _ = strings.Cut(public, "?")
	if rawQuery == "" {
		return public
	}
	return public + "?" + rawQuery
}

// ServeStatus is POST /sms/status: the provider's report on a message. It
// is kept on the event (invite.delivery or invite.reminder.delivery), and
// one saying that the customer opted out or that the number can never be
// reached suppresses the number for the event's account, as a refusal at
// send time does. 204 whether or not the event still exists: the provider
// can do nothing about it.
func (c *Callbacks) ServeStatus(w http.ResponseWriter, r *http.Request) {
	form, err := c.form(w, r, func(k CallbackKeys) string { return k.StatusURL })
	if err != nil {
		c.o.Fail(w, r, err)
		return
	}
	st, err := ParseStatus(form)
	if err != nil {
		c.o.Fail(w, r, refuse(http.StatusBadRequest, "%s", err))
		return
	}
	eventID, reminder, err := CallbackSubject(r.URL.Query())
	if err != nil {
		c.o.Fail(w, r, refuse(http.StatusBadRequest, "%s", err))
		return
	}
	d := invite.SMSReport{MessageSID: st.MessageSID, EventID: eventID, Reminder: reminder, Status: st.Status, ErrorCode: st.ErrorCode}
	switch {
	case st.OptedOut():
		d.Suppress = invite.Unsubscribed
	case st.NumberRefused():
		d.Suppress = invite.Bounced
	}
	if d.Suppress != "" {
		// The provider names the number in E.164; without it, the one the
		// send recorded is suppressed.
		d.Number, _ = NormalizeMobile(st.To, "")
	}
	recorded, err := c.o.Store.RecordSMSDelivery(r.Context(), d)
	if err != nil {
		c.o.Fail(w, r, err)
		return
	}
	c.o.Logger.DebugContext(r.Context(), "sms status", "event_id", eventID, "message_sid", st.MessageSID, "status", st.Status,
		"error_code", st.ErrorCode, "recorded", recorded, "suppress", d.Suppress)
	w.WriteHeader(http.StatusNoContent)
}

// ServeInbound is POST /sms/inbound: a message from a customer. An
// opt-out (STOP and the provider's other keywords) suppresses the
// sender's number, reason unsubscribed, for every account that has texted
// it — the message names only the two numbers, and the sending number is
// the service's, shared by every account. START does not lift a
// suppression: only DELETE /suppressions/{address} does. Any other text
// is ignored. The answer is an empty TwiML document: no reply.
func (c *Callbacks) ServeInbound(w http.ResponseWriter, r *http.Request) {
	form, err := c.form(w, r, func(k CallbackKeys) string { return k.InboundURL })
	if err != nil {
		c.o.Fail(w, r, err)
		return
	}
	m, err := ParseInbound(form)
	if err != nil {
		c.o.Fail(w, r, refuse(http.StatusBadRequest, "%s", err))
		return
	}
	if m.OptOut() {
		if number, err := NormalizeMobile(m.From, ""); err == nil {
			added, err := c.o.Store.SuppressTextedNumber(r.Context(), number, invite.Unsubscribed)
			if err != nil {
				c.o.Fail(w, r, err)
				return
			}
			c.o.Logger.InfoContext(r.Context(), "sms opt-out", "from", MaskNumber(number), "accounts", added)
		}
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, emptyTwiML)
}
