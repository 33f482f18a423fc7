package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/templates"
)

// rendered is an invite or reminder ready to go by either medium, with
// the templates it was rendered from.
type rendered struct {
	mail templates.Message
	// text is the SMS; "" without a provider or a valid mobile number,
	// when no SMS can be claimed.
	text string
	// mailTemplate and smsTemplate are the templates the two were
	// rendered from, for the attempt's record.
	mailTemplate, smsTemplate templates.Chosen
}

// render renders the email and, when one may be sent, the SMS, from the
// shop's templates in force now (the event type's, else the account's,
// else the built-in ones) in the event's language: the medium is known
// only once the send is claimed, and nothing may fail between the claim
// and the delivery. Rendering at send time means a changed template
// applies to every message sent after the change, and to none before.
func (a *Activities) render(ctx context.Context, c invitedb.InviteContent, reminder bool) (rendered, error) {
	var r rendered
	kind := templates.KindInvite
	if reminder {
		kind = templates.KindReminder
	}
	locale := a.Templates.Pick(c.Locale)
	et, chosen, err := a.eventTemplate(ctx, c.EventID, kind, templates.Language(locale))
	if err != nil {
		return r, err
	}
	d := templates.Data{FirstName: c.FirstName, FeedbackURL: a.Feedback.URL(c.EventID), Brand: c.Account.Brand(),
		UnsubscribeURL: a.unsubscribeURL(c.EventID), Reminder: reminder, OrderReference: et.OrderReference,
		EventType: et.EventType, Template: chosen.Content}
	for _, p := range c.Products {
		d.Products = append(d.Products, templates.Product{Name: p.Name, ImageURL: p.ImageURL, URL: p.URL})
	}
	if r.mail, err = a.Templates.Render(locale, d); err != nil {
		return r, err
	}
	r.mailTemplate = used(chosen, r.mail.Builtin)
	if a.SMS == nil || normalizeMobile(c.Mobile, c.Locale) == "" {
		return r, nil
	}
	if a.SMSTemplates == nil {
		return r, errors.New("render sms: no SMS templates")
	}
	kind = templates.KindSMSInvite
	if reminder {
		kind = templates.KindSMSReminder
	}
	locale = a.SMSTemplates.Pick(c.Locale)
	st, smsChosen, err := a.eventTemplate(ctx, c.EventID, kind, templates.Language(locale))
	if err != nil {
		return r, err
	}
	sd := templates.SMSData{ShopName: c.Account.Brand().DisplayName, FirstName: c.FirstName, FeedbackURL: a.Feedback.URL(c.EventID),
		Reminder: reminder, OrderReference: st.OrderReference, EventType: st.EventType}
	if len(c.Products) > 0 {
		sd.ProductName = c.Products[0].Name
	}
	if smsChosen.Content != nil {
		sd.Template = smsChosen.Content.Text
	}
	m, err := a.SMSTemplates.Render(locale, sd)
	if err != nil {
		return r, err
	}
	r.text, r.smsTemplate = m.Text, used(smsChosen, m.Builtin)
	return r, nil
}

// eventTemplate reads the event's values for the placeholders and the
// templates of kind in lang stored for it, and chooses the one in force.
func (a *Activities) eventTemplate(ctx context.Context, eventID string, kind templates.Kind, lang string) (
	templatedb.EventTemplate, templates.Chosen, error) {
	et, err := a.TemplateStore.LoadEventTemplate(ctx, eventID, string(kind), lang)
	if err != nil {
		return et, templates.Chosen{}, storeError(err)
	}
	chosen, err := templates.Choose(templates.Stored(et.ForEventType), templates.Stored(et.ForAccount))
	if err != nil {
		return et, templates.Chosen{}, fmt.Errorf("event %s: %w", eventID, err)
	}
	return et, chosen, nil
}

// used is the template a message was rendered from: chosen, unless the
// built-in one stood in for it.
func used(chosen templates.Chosen, builtin bool) templates.Chosen {
	if builtin {
		return templates.Chosen{Source: templates.SourceBuiltin}
	}
	return chosen
}

// recordTemplate notes on the send attempt just claimed which template
// (source and version) its message was rendered from. The note is for
// people (attemptHistory); a failure to write it is logged and the send
// goes on, since holding back a claimed send would turn it uncertain.
func (a *Activities) recordTemplate(ctx context.Context, eventID string, kind templates.Kind, medium invite.Medium, msg rendered) {
	chosen := msg.mailTemplate
	if medium == invite.SMS {
		chosen = msg.smsTemplate
	}
	if err := a.Invites.RecordAttemptTemplate(ctx, eventID, string(kind), string(chosen.Source), chosen.Version); err != nil {
		a.logger().WarnContext(ctx, "attempt's template not recorded", "event_id", eventID, "error", err)
	}
}
