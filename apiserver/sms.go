package apiserver

import (
	"encoding/json"
	"time"

	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/sms"
)

// smsDelivery is the SMS provider's last report on the message of an
// invite or reminder sent by SMS; null before the first report, and for
// email.
type smsDelivery struct {
	Status    string            `json:"status"`    // queued, sent, delivered, undelivered, failed, …
	ErrorCode *int              `json:"errorCode"` // the provider's reason for undelivered and failed
	UpdatedAt apiwire.Timestamp `json:"updatedAt"`
}

// addSMSDelivery puts the reports of invitedb.Event.SMSDelivery on the
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
		return &smsDelivery{Status: r.Status, ErrorCode: r.ErrorCode, UpdatedAt: apiwire.Timestamp(r.UpdatedAt)}
	}
	if d := out(sms.MessageInvite); d != nil {
		inv.Delivery = d
	}
	if d := out(sms.MessageReminder); d != nil && inv.Reminder != nil {
		inv.Reminder.Delivery = d
	}
	return nil
}
