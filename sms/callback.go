package sms

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// Message statuses the provider reports (MessageStatus).
const (
	StatusAccepted    = "accepted"
	StatusScheduled   = "scheduled"
	StatusQueued      = "queued"
	StatusSending     = "sending"
	StatusSent        = "sent"
	StatusDelivered   = "delivered"
	StatusUndelivered = "undelivered"
	StatusFailed      = "failed"
	StatusCanceled    = "canceled"
	StatusRead        = "read"
)

// Status is one delivery update posted to the status callback.
type Status struct {
	MessageSID string // as Send returned it
	Status     string // a Status… value, lower case
	ErrorCode  int    // why it was undelivered or failed, 0 if none
	To         string // the recipient's full number: customer data, do not log
}

// Final reports whether no further update follows: the message was
// delivered (or read), or it never will be.
func (s Status) Final() bool {
	switch s.Status {
	case StatusDelivered, StatusUndelivered, StatusFailed, StatusCanceled, StatusRead:
		return true
	}
	return false
}

// ParseStatus reads a status callback's form. Check the signature first
// (ValidateSignature).
func ParseStatus(form url.Values) (Status, error) {
	s := Status{
		MessageSID: first(form, "MessageSid", "SmsSid"),
		Status:     strings.ToLower(first(form, "MessageStatus", "SmsStatus")),
		To:         form.Get("To"),
	}
	if s.MessageSID == "" {
		return Status{}, errors.New("status callback: no MessageSid")
	}
	if s.Status == "" {
		return Status{}, errors.New("status callback: no MessageStatus")
	}
	if c := strings.TrimSpace(form.Get("ErrorCode")); c != "" {
		code, err := strconv.Atoi(c)
		if err != nil || code < 0 {
			return Status{}, fmt.Errorf("status callback: bad ErrorCode %q", c)
		}
		s.ErrorCode = code
	}
	return s, nil
}

// Inbound is a message a customer sent to the sender's number.
type Inbound struct {
	MessageSID string
	From       string // the customer's number: customer data, do not log
	To         string // the sender's number
	Body       string
	// OptOutType is set by a messaging service with advanced opt-out:
	// STOP, START or HELP.
	OptOutType string
}

// OptOut reports whether the customer asked to receive no more messages:
// the provider says so, or the text is an opt-out keyword.
func (m Inbound) OptOut() bool {
	return strings.EqualFold(m.OptOutType, "STOP") || IsOptOut(m.Body)
}

// OptIn reports whether the customer asked to receive messages again.
func (m Inbound) OptIn() bool {
	return strings.EqualFold(m.OptOutType, "START") || IsOptIn(m.Body)
}

// ParseInbound reads an incoming-message callback's form. Check the
// signature first (ValidateSignature).
func ParseInbound(form url.Values) (Inbound, error) {
	m := Inbound{
		MessageSID: first(form, "MessageSid", "SmsSid"),
		From:       form.Get("From"),
		To:         form.Get("To"),
		Body:       form.Get("Body"),
		OptOutType: form.Get("OptOutType"),
	}
	if m.MessageSID == "" {
		return Inbound{}, errors.New("inbound message: no MessageSid")
	}
	if m.From == "" {
		return Inbound{}, errors.New("inbound message: no From")
	}
	return m, nil
}

// IsOptOut reports whether an incoming text is one of the provider's
// standard opt-out keywords — STOP, STOPALL, UNSUBSCRIBE, CANCEL, END,
// QUIT — in any case, alone but for surrounding spaces and punctuation.
// As with the provider, "stop please" is not an opt-out.
func IsOptOut(body string) bool {
	switch keyword(body) {
	case "STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT":
		return true
	}
	return false
}

// IsOptIn reports whether an incoming text is one of the provider's
// opt-in keywords — START, YES, UNSTOP — as IsOptOut reads them.
func IsOptIn(body string) bool {
	switch keyword(body) {
	case "START", "YES", "UNSTOP":
		return true
	}
	return false
}

// keyword is the text without surrounding spaces, punctuation and
// symbols, in upper case.
func keyword(body string) string {
	return strings.ToUpper(strings.TrimFunc(body, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.IsControl(r) ||
			unicode.Is(unicode.Cf, r) // zero-width characters phones add
	}))
}

func first(form url.Values, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(form.Get(n)); v != "" {
			return v
		}
	}
	return ""
}
