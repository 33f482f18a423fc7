package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/workflows"
)

// TestSubjectPrefix marks the subject of a test mail, and the text of a
// test SMS, in every language.
const TestSubjectPrefix = "[Test] "

// SendTemplateTest sends a shop's test of a template: the template in
// force for its kind, language and event type (or the account, or the
// built-in one), rendered with sample data and the shop's branding,
// marked as a test in its subject (and, for an email, a header), with a
// feedback link that leads to no customer's page and a one-click
// unsubscribe that works: it carries the address, sealed, for the
// unsubscribe page to put on the account's suppression list. The outcome
// and the template's source and version are recorded, and the address
// forgotten. An address suppressed since the test was ordered is not
// sent to. A failed delivery is recorded, not retried; a test that has
// ended already is not sent again.
func (a *Activities) SendTemplateTest(ctx context.Context, in workflows.TestSendInput) (workflows.TestSendResult, error) {
	ts, err := a.TemplateStore.LoadTestSend(ctx, in.TestSendID)
	if err != nil {
		return workflows.TestSendResult{}, storeError(err)
	}
	if ts.Status != templatedb.TestSendPending {
		return workflows.TestSendResult{Status: ts.Status, Error: ts.Error}, nil
	}
	acc, err := a.Accounts.Account(ctx, ts.AccountID)
	if err != nil {
		return workflows.TestSendResult{}, storeError(err)
	}
	etLevel, accLevel, err := a.TemplateStore.TemplateLevels(ctx, ts.AccountID, ts.EventTypeID, ts.Kind, ts.Locale)
	if err != nil {
		return workflows.TestSendResult{}, storeError(err)
	}
	chosen, err := templates.Choose(templates.Stored(etLevel), templates.Stored(accLevel))
	if err != nil {
		return workflows.TestSendResult{}, fmt.Errorf("test send %s: %w", ts.ID, err)
	}
	kind := templates.Kind(ts.Kind)
	listed := suppressiondb.ListedAddress(kind.Medium(), ts.Address)
	eventType := ""
	if ts.EventTypeID != "" {
		et, err := a.Accounts.EventType(ctx, ts.AccountID, ts.EventTypeID)
		if err != nil {
			return workflows.TestSendResult{}, storeError(err)
		}
		eventType = et.Name
	}
	data := templates.Sample(ts.Locale, eventType)
	data.Brand = acc.Brand()
	data.FeedbackURL = a.Feedback.URL(templates.SampleEventID)
	if kind.SMS() && (a.SMS == nil || a.SMSTemplates == nil) {
		return a.finishTest(ctx, ts, chosen, errors.New("no SMS provider configured"))
	}
	switch sup, err := a.Suppressions.Suppression(ctx, ts.AccountID, listed); {
	case err == nil:
		return a.finishTest(ctx, ts, chosen, &suppressiondb.SuppressedError{Reason: sup.Reason})
	case !errors.Is(err, pg.ErrNotFound):
		return workflows.TestSendResult{}, storeError(err)
	}
	if !kind.SMS() && a.Unsubscribe != nil {
		if data.UnsubscribeURL, err = a.Unsubscribe.SealedURL(ts.ID, listed); err != nil {
			return workflows.TestSendResult{}, err
		}
	}
	lib := templates.Library{Mail: a.Templates, SMS: a.SMSTemplates}
	msg, err := lib.Render(kind, ts.Locale, chosen.Content, data)
	if err != nil {
		return workflows.TestSendResult{}, err
	}
	if msg.Builtin {
		chosen = templates.Chosen{Source: templates.SourceBuiltin}
	}
	var sendErr error
	switch {
	case kind.SMS():
		_, sendErr = a.SMS.SendSMS(ctx, SMS{EventID: ts.ID, To: ts.Address, Text: TestSubjectPrefix + msg.Text})
	default:
		b := acc.Brand()
		sendErr = a.Mailer.Send(ctx, mail.Message{EventID: ts.ID, Test: true, To: ts.Address, FromName: b.DisplayName,
			ReplyTo: b.ReplyTo, Locale: msg.Locale, Subject: TestSubjectPrefix + msg.Subject, Text: msg.Text, HTML: msg.HTML,
			UnsubscribeURL: data.UnsubscribeURL})
	}
	return a.finishTest(ctx, ts, chosen, sendErr)
}

// finishTest records how a test send ended.
func (a *Activities) finishTest(ctx context.Context, ts templatedb.TestSend, chosen templates.Chosen, sendErr error) (workflows.TestSendResult, error) {
	errText := ""
	if sendErr != nil {
		errText = sendErr.Error()
		a.logger().WarnContext(ctx, "template test not delivered", "test_send_id", ts.ID, "to", ts.MaskedAddress, "error", errText)
	}
	done, err := a.TemplateStore.FinishTestSend(ctx, ts.ID, string(chosen.Source), chosen.Version, errText)
	if err != nil {
		return workflows.TestSendResult{}, fmt.Errorf("record test send: %w", err)
	}
	a.logger().InfoContext(ctx, "template test ended", "test_send_id", ts.ID, "status", done.Status,
		"template_source", chosen.Source, "template_version", chosen.Version)
	return workflows.TestSendResult{Status: done.Status, Error: done.Error}, nil
}
