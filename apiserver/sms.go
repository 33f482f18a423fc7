package apiserver

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/store"
)

// The SMS provider's callbacks: delivery updates of the
// messages Touchpoint sent, and messages customers send back. They carry
// no token: the provider signs each one (X-Twilio-Signature, an HMAC keyed
// with the auth token over the URL it called and the form), and that
// signature is all that authorises them. They are not rate limited per
// address, as the pages are: every one comes from the provider's few
// addresses, and a forged one costs an HMAC.

// SMSStatusPath and SMSInboundPath are where the callbacks are served.
const (
	SMSStatusPath  = config.SMSStatusPath
	SMSInboundPath = config.SMSInboundPath
)

// SMSCallbacks is what the API needs of the SMS provider.
type SMSCallbacks struct {
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

// maxSMSCallbackBody bounds a callback's form: a status update is a few
// hundred bytes, an incoming message at most 1,600 characters of text
// with some thirty parameters.
const maxSMSCallbackBody = 64 << 10

// emptyTwiML answers an incoming message without replying to it: the
// provider (or its messaging service) sends its own opt-out confirmation.
const emptyTwiML = `<?xml version="1.0" encoding="UTF-8"?><Response/>`

// smsForm reads a callback's form and checks its signature over
// publicURL with the query the provider called it with. Without a
// provider nothing can be verified: 403.
func (s *server) smsForm(w http.ResponseWriter, r *http.Request, publicURL func(SMSCallbacks) string) (url.Values, error) {
	if s.sms == nil {
		return nil, newError(http.StatusForbidden, "no SMS provider is configured, so no callback can be verified")
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, newError(http.StatusUnsupportedMediaType, "Content-Type must be application/x-www-form-urlencoded")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxSMSCallbackBody)
	if err := r.ParseForm(); err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return nil, newError(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", maxSMSCallbackBody)
		}
		return nil, newError(http.StatusBadRequest, "the body is not a form")
	}
	if !sms.ValidateSignature(s.sms.AuthToken, signedURL(publicURL(*s.sms), r.URL.RawQuery), r.PostForm, r.Header.Get(sms.SignatureHeader)) {
		return nil, newError(http.StatusForbidden, "the %s header does not verify", sms.SignatureHeader)
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

// smsStatus is POST /sms/status: the provider's report on a message. It
// is kept on the event (invite.delivery or invite.reminder.delivery), and
// one saying that the customer opted out or that the number can never be
// reached suppresses the number for the event's account, as a refusal at
// send time does. 204 whether or not the event still exists: the provider
// can do nothing about it.
func (s *server) smsStatus(w http.ResponseWriter, r *http.Request) {
	form, err := s.smsForm(w, r, func(c SMSCallbacks) string { return c.StatusURL })
	if err != nil {
		s.fail(w, r, err)
		return
	}
	st, err := sms.ParseStatus(form)
	if err != nil {
		s.fail(w, r, newError(http.StatusBadRequest, "%s", err))
		return
	}
	eventID, reminder, err := sms.CallbackSubject(r.URL.Query())
	if err != nil {
		s.fail(w, r, newError(http.StatusBadRequest, "%s", err))
		return
	}
	d := store.SMSDelivery{MessageSID: st.MessageSID, EventID: eventID, Reminder: reminder, Status: st.Status, ErrorCode: st.ErrorCode}
	switch {
	case st.OptedOut():
		d.Suppress = invite.Unsubscribed
	case st.NumberRefused():
		d.Suppress = invite.Bounced
	}
	if d.Suppress != "" {
		// The provider names the number in E.164; without it, the one the
		// send recorded is suppressed.
		d.Number, _ = sms.NormalizeMobile(st.To, "")
	}
	recorded, err := s.store.RecordSMSDelivery(r.Context(), d)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.DebugContext(r.Context(), "sms status", "event_id", eventID, "message_sid", st.MessageSID, "status", st.Status,
		"error_code", st.ErrorCode, "recorded", recorded, "suppress", d.Suppress)
	w.WriteHeader(http.StatusNoContent)
}

// smsInbound is POST /sms/inbound: a message from a customer. An opt-out
// (STOP and the provider's other keywords) suppresses the sender's number,
// reason unsubscribed, for every account that has texted it — the message
// names only the two numbers, and the sending number is the service's,
// shared by every account. START does not lift a suppression: only
// DELETE /suppressions/{address} does. Any other text is
// ignored. The answer is an empty TwiML document: no reply.
func (s *server) smsInbound(w http.ResponseWriter, r *http.Request) {
	form, err := s.smsForm(w, r, func(c SMSCallbacks) string { return c.InboundURL })
	if err != nil {
		s.fail(w, r, err)
		return
	}
	m, err := sms.ParseInbound(form)
	if err != nil {
		s.fail(w, r, newError(http.StatusBadRequest, "%s", err))
		return
	}
	if m.OptOut() {
		if number, err := sms.NormalizeMobile(m.From, ""); err == nil {
			added, err := s.store.SuppressTextedNumber(r.Context(), number, invite.Unsubscribed)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			s.log.InfoContext(r.Context(), "sms opt-out", "from", sms.MaskNumber(number), "accounts", added)
		}
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, emptyTwiML)
}

// smsDelivery is the SMS provider's last report on the message of an
// invite or reminder sent by SMS; null before the first report, and for
// email.
type smsDelivery struct {
	Status    string    `json:"status"`    // queued, sent, delivered, undelivered, failed, …
	ErrorCode *int      `json:"errorCode"` // the provider's reason for undelivered and failed
	UpdatedAt timestamp `json:"updatedAt"`
}

// addSMSDelivery puts the reports of store.Event.SMSDelivery on the
// invite and its reminder.
func addSMSDelivery(inv *inviteOut, raw []byte) error {
	if raw == nil {
		return nil
	}
	var reports map[string]struct {
		Status    string    `json:"status"`
		ErrorCode *int      `json:"errorCode"`
		UpdatedAt time.Time `json:"updatedAt"`
	}
	if err := json.Unmarshal(raw, &reports); err != nil {
		return err
	}
	out := func(kind string) *smsDelivery {
		r, ok := reports[kind]
		if !ok {
			return nil
		}
		return &smsDelivery{Status: r.Status, ErrorCode: r.ErrorCode, UpdatedAt: timestamp(r.UpdatedAt)}
	}
	inv.Delivery = out(sms.MessageInvite)
	if inv.Reminder != nil {
		inv.Reminder.Delivery = out(sms.MessageReminder)
	}
	return nil
}
