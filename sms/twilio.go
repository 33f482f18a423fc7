package sms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/touchpoint/touchpoint/senderr"
)

// DefaultBaseURL is Twilio's REST API.
const DefaultBaseURL = "https://api.twilio.com"

// DefaultTimeout bounds one send when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxResponse bounds how much of an answer is read: a message resource or
// an error is a few hundred bytes.
const maxResponse = 64 << 10

// Config configures the Twilio adapter (TOUCHPOINT_SMS_*).
type Config struct {
	// BaseURL is the API's root, default DefaultBaseURL; another provider
	// speaking the same API, or a test server, goes here.
	BaseURL    string
	AccountSID string
	AuthToken  string
	// From is the sender: an E.164 number or an alphanumeric sender ID.
	From string
	// MessagingServiceSID sends through a messaging service, which picks
	// the sender. At least one of From and MessagingServiceSID is needed;
	// both are sent when both are set.
	MessagingServiceSID string
	// StatusCallbackURL, when set, is where the provider posts delivery
	// updates (POST /sms/status, checked with ValidateSignature).
	StatusCallbackURL string
	// Timeout bounds one send, from dialing to the answer (default
	// DefaultTimeout).
	Timeout time.Duration
	// HTTPClient is optional (default: a client of its own). It is
	// copied, and the copy never follows redirects.
	HTTPClient *http.Client
}

// Message is one text message.
type Message struct {
	To   string // E.164, as NormalizeMobile returns it
	Body string
	// StatusCallback, when set, replaces Config.StatusCallbackURL for this
	// message: a query on it (?event=evt-…) comes back with every status
	// update, covered by the signature.
	StatusCallback string
}

// Twilio sends messages through the Twilio Messages API. It is safe for
// concurrent use.
type Twilio struct {
	endpoint string // …/2010-04-01/Accounts/{sid}/Messages.json
	cfg      Config
	client   *http.Client
}

// NewTwilio checks the configuration and builds the adapter. Its errors
// name the field at fault, never the auth token's value.
func NewTwilio(c Config) (*Twilio, error) {
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	base, err := url.Parse(c.BaseURL)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" ||
		base.User != nil || base.RawQuery != "" || base.Fragment != "" {
		return nil, errors.New("SMS base URL must be an absolute http(s) URL without credentials or query")
	}
	switch {
	case c.AccountSID == "":
		return nil, errors.New("SMS account SID is required")
	case c.AuthToken == "":
		return nil, errors.New("SMS auth token is required")
	case c.From == "" && c.MessagingServiceSID == "":
		return nil, errors.New("SMS sender is required: a From number or a messaging service SID")
	}
	if c.StatusCallbackURL != "" {
		if err := checkCallbackURL(c.StatusCallbackURL); err != nil {
			return nil, err
		}
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	if c.HTTPClient != nil {
		copied := *c.HTTPClient
		client = &copied
	}
	// A redirect is an answer, not a place to send the credentials to.
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.HTTPClient = nil
	return &Twilio{
		endpoint: strings.TrimSuffix(base.String(), "/") + "/2010-04-01/Accounts/" + url.PathEscape(c.AccountSID) + "/Messages.json",
		cfg:      c,
		client:   client,
	}, nil
}

func checkCallbackURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return errors.New("SMS status callback URL must be an absolute http(s) URL")
	}
	return nil
}

// Send hands the message to the provider and returns its message SID
// ("SM…"). The SID may be "" when the provider accepted the message (2xx)
// but its answer could not be read; that is still a success.
//
// Errors are *Error (see the package doc): 429 and 5xx answers, and
// failures before the request was written (connection refused, DNS), are
// Transient; a timeout or a broken connection after it was written is
// Uncertain; other answers are Permanent, with senderr.RecipientRefused
// for a number the provider will never reach and RecipientOptedOut for one
// that replied STOP.
func (t *Twilio) Send(ctx context.Context, m Message) (string, error) {
	if strings.TrimSpace(m.To) == "" {
		return "", t.fail(senderr.Permanent, senderr.RecipientNotAtFault, 0, 0, "sms: message has no recipient number", nil)
	}
	if m.Body == "" {
		return "", t.fail(senderr.Permanent, senderr.RecipientNotAtFault, 0, 0, "sms: message has no text", nil)
	}
	form := url.Values{"To": {m.To}, "Body": {m.Body}}
	if t.cfg.From != "" {
		form.Set("From", t.cfg.From)
	}
	if t.cfg.MessagingServiceSID != "" {
		form.Set("MessagingServiceSid", t.cfg.MessagingServiceSID)
	}
	callback := t.cfg.StatusCallbackURL
	if m.StatusCallback != "" {
		if err := checkCallbackURL(m.StatusCallback); err != nil {
			return "", t.fail(senderr.Permanent, senderr.RecipientNotAtFault, 0, 0, "sms: "+err.Error(), nil)
		}
		callback = m.StatusCallback
	}
	if callback != "" {
		form.Set("StatusCallback", callback)
	}

	ctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	// Whether the whole request went out decides between Transient (the
	// provider cannot have acted on it) and Uncertain (it may have).
	var written atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				written.Store(true)
			}
		},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", t.fail(senderr.Permanent, senderr.RecipientNotAtFault, 0, 0, "sms: build request", err)
	}
	req.SetBasicAuth(t.cfg.AccountSID, t.cfg.AuthToken)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "touchpoint")

	resp, err := t.client.Do(req)
	if err != nil {
		cause := err
		var ue *url.Error
		if errors.As(err, &ue) {
			cause = ue.Err // its text would repeat the endpoint
		}
		if written.Load() {
			return "", t.fail(senderr.Uncertain, senderr.RecipientNotAtFault, 0, 0, "sms: request sent, no answer: "+t.redact(cause.Error(), m.To), err)
		}
		return "", t.fail(senderr.Transient, senderr.RecipientNotAtFault, 0, 0, "sms: request not sent: "+t.redact(cause.Error(), m.To), err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))

	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		var ok struct {
			SID string `json:"sid"`
		}
		_ = json.Unmarshal(body, &ok) // the status says it all; the SID is a bonus
		return ok.SID, nil
	}
	return "", t.answerError(resp.StatusCode, body, m.To)
}

// answerError classifies an answer other than 2xx.
func (t *Twilio) answerError(status int, body []byte, to string) error {
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &e) // a proxy's HTML page has neither
	text := fmt.Sprintf("sms: HTTP %d", status)
	if e.Code != 0 {
		text += fmt.Sprintf(", error %d", e.Code)
	}
	if e.Message != "" {
		text += ": " + t.redact(e.Message, to)
	}
	switch {
	case status == http.StatusTooManyRequests || status >= 500:
		return t.fail(senderr.Transient, senderr.RecipientNotAtFault, status, e.Code, text, nil)
	case e.Code == codeUnsubscribed:
		return t.fail(senderr.Permanent, senderr.RecipientOptedOut, status, e.Code, text, nil)
	case refusesNumber(e.Code):
		return t.fail(senderr.Permanent, senderr.RecipientRefused, status, e.Code, text, nil)
	default:
		return t.fail(senderr.Permanent, senderr.RecipientNotAtFault, status, e.Code, text, nil)
	}
}

// codeUnsubscribed: the recipient replied STOP to this sender.
const codeUnsubscribed = 21610

// refusesNumber tells the provider's error codes that refuse the number
// itself, so that sending to it again would meet the same refusal.
func refusesNumber(code int) bool {
	switch code {
	case 21211, // invalid 'To' number
		21217, // the number does not appear to be valid
		21401, // invalid phone number
		21407, // this number type does not support SMS
		21421, // the phone number is invalid
		21612, // the 'To' number is not reachable by SMS
		21614, // the 'To' number is not a mobile number
		21635: // the 'To' number is a landline
		return true
	}
	return false
}

// redact masks the recipient's number in the forms providers echo it in
// and removes the auth token (see redact).
func (t *Twilio) redact(text, to string) string {
	if digits := strings.TrimPrefix(strings.TrimSpace(to), "+"); len(digits) > 4 {
		text = strings.ReplaceAll(text, "+"+digits, MaskNumber(digits))
		text = strings.ReplaceAll(text, digits, MaskNumber(digits))
	}
	return redact(text, t.cfg.AuthToken)
}

func (t *Twilio) fail(kind senderr.Kind, recipient senderr.Recipient, status, code int, msg string, cause error) *Error {
	return &Error{Status: status, Code: code, cause: cause,
		send: &senderr.Error{Kind: kind, Recipient: recipient, Code: code, Text: msg}}
}
