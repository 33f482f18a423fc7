package activities

import (
	"context"
	"fmt"

	"github.com/touchpoint/touchpoint/senderr"
	"github.com/touchpoint/touchpoint/sms"
)

// TwilioSMS is the SMSSender of a provider speaking the Twilio Messages
// API. Each message asks for its delivery updates at the status callback
// URL with its event and kind in the query (sms.StatusCallbackFor), so
// that POST /sms/status knows what a report is about without a record of
// the message's SID.
type TwilioSMS struct {
	provider  *sms.Twilio
	statusURL string
}

// NewTwilioSMS sends through provider and asks for status updates at
// statusCallbackURL (TOUCHPOINT_SMS_STATUS_CALLBACK_URL: the API's
// /sms/status as the provider reaches it).
func NewTwilioSMS(provider *sms.Twilio, statusCallbackURL string) (*TwilioSMS, error) {
	if _, err := sms.StatusCallbackFor(statusCallbackURL, "evt-check", false); err != nil {
		return nil, fmt.Errorf("sms status callback: %w", err)
	}
	return &TwilioSMS{provider: provider, statusURL: statusCallbackURL}, nil
}

// SendSMS sends m; its errors are the provider adapter's (*sms.Error).
func (t *TwilioSMS) SendSMS(ctx context.Context, m SMS) (string, error) {
	callback, err := sms.StatusCallbackFor(t.statusURL, m.EventID, m.Reminder)
	if err != nil { // checked in NewTwilioSMS
		return "", &senderr.Error{Kind: senderr.Permanent, Text: "sms: status callback URL: " + err.Error()}
	}
	return t.provider.Send(ctx, sms.Message{To: m.To, Body: m.Text, StatusCallback: callback})
}
