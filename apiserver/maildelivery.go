package apiserver

import (
	"encoding/json"

	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/reportdb"
)

// mailDelivery is what the mail provider last reported of the message of
// an invite or reminder sent by email (POST /mail-events/{provider}):
// delivered, bounced or complained. A later "delivered" never replaces a
// bounce or a complaint.
type mailDelivery struct {
	Status   invite.MailOutcome `json:"status"`
	Provider string             `json:"provider"`
	At       apiwire.Timestamp  `json:"at"`
}

// providerEventOut is one report of the mail provider on an attempt's
// message, delays and temporary bounces included.
type providerEventOut struct {
	Provider string             `json:"provider"`
	Outcome  invite.MailOutcome `json:"outcome"`
	Detail   *string            `json:"detail"`
	At       apiwire.Timestamp  `json:"at"`
}

// addMailDelivery puts the reports of invitedb.Event.MailDelivery on the
// invite and its reminder.
func addMailDelivery(inv *inviteOut, raw []byte) error {
	if raw == nil {
		return nil
	}
	var byKind map[invite.Kind]reportdb.MailDelivery
	if err := json.Unmarshal(raw, &byKind); err != nil {
		return err
	}
	out := func(k invite.Kind) *mailDelivery {
		d, ok := byKind[k]
		if !ok {
			return nil
		}
		return &mailDelivery{Status: d.Status, Provider: d.Provider, At: apiwire.Timestamp(d.At)}
	}
	if d := out(invite.KindInvite); d != nil {
		inv.Delivery = d
	}
	if d := out(invite.KindReminder); d != nil && inv.Reminder != nil {
		inv.Reminder.Delivery = d
	}
	return nil
}

// providerEventsOut converts an attempt's provider reports; never null.
func providerEventsOut(es []invitedb.ProviderEvent) []providerEventOut {
	out := make([]providerEventOut, len(es))
	for i, e := range es {
		out[i] = providerEventOut{Provider: e.Provider, Outcome: e.Outcome, Detail: nonEmpty(e.Detail), At: apiwire.Timestamp(e.At)}
	}
	return out
}
