// Package activities holds the invite workflow's activities: every step
// that reads or writes PostgreSQL, renders, or delivers. They are
// idempotent — each is a guarded transition of the invite state in the
// events table (store/invitedb) — so Temporal may run any of them again.
//
// Customer data (address, name, mobile) is loaded here from PostgreSQL and
// never returned to Temporal: results carry only invite states, and error
// texts mask addresses.
package activities

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/senderr"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/workflows"
)

// SMSSender delivers an invite or a reminder as a text message and
// returns the provider's message SID ("" when it did not say). TwilioSMS
// is the one built in. With Activities.SMS nil, an invite whose setting's
// medium is sms is skipped (no_address) when the customer has no valid
// mobile number, and otherwise fails (reason no_provider, lastError "no
// SMS provider configured"), so ops can find those invites and retry them
// once a provider exists.
//
// Its errors speak the vocabulary of every medium (senderr): Transient is
// retried, Permanent fails the invite, Uncertain (the provider may have
// taken it) fails it as delivery_uncertain and is never sent again. A
// permanent refusal of the number itself (senderr.RecipientRefused)
// suppresses it as bounced, one whose owner opted out
// (senderr.RecipientOptedOut) as unsubscribed.
type SMSSender interface {
	SendSMS(ctx context.Context, m SMS) (messageSID string, err error)
}

// SMS is one text message.
type SMS struct {
	EventID  string
	Reminder bool   // the event's reminder, not its invite
	To       string // E.164
	Text     string
}

// Accounts is what the steps read of the shop: its account and event
// types.
type Accounts interface {
	Account(ctx context.Context, id string) (accountdb.Account, error)
	EventType(ctx context.Context, accountID, id string) (accountdb.EventType, error)
}

// Invites is what the steps read and write of an event's sends, its
// invite and its reminder (store/invitedb): each step applies the rule of
// the invite package for the kind.
type Invites interface {
	LoadPlan(ctx context.Context, k invite.Kind, eventID string) (invite.Plan, error)
	MarkScheduled(ctx context.Context, k invite.Kind, eventID string, at time.Time) (invite.State, error)
	MarkSkipped(ctx context.Context, k invite.Kind, eventID string, reason invite.Reason) (invite.State, error)
	MarkCancelled(ctx context.Context, k invite.Kind, eventID string) (invite.State, error)
	GiveUp(ctx context.Context, k invite.Kind, eventID string, reason invite.Reason, lastError string) (invite.State, error)
	LoadInviteContent(ctx context.Context, eventID string) (invitedb.InviteContent, error)
	ClaimSend(ctx context.Context, k invite.Kind, eventID string, opts invitedb.ClaimOptions) (invitedb.Claim, error)
	FinishSend(ctx context.Context, k invite.Kind, eventID string, r invite.SendResult) (invite.State, error)
	RecordAttemptTemplate(ctx context.Context, eventID, kind, source string, version int) error
}

// TemplateStore is what the steps read of the shop's templates
// (store/templatedb), and how a test send ends.
type TemplateStore interface {
	LoadEventTemplate(ctx context.Context, eventID, kind, lang string) (templatedb.EventTemplate, error)
	LoadTestSend(ctx context.Context, id string) (templatedb.TestSend, error)
	TemplateLevels(ctx context.Context, accountID, eventTypeID, kind, lang string) (eventType, account templatedb.Level, err error)
	FinishTestSend(ctx context.Context, id, templateSource string, templateVersion int, errText string) (templatedb.TestSend, error)
}

// Suppressions is what a test send reads of the suppression list
// (store/suppressiondb).
type Suppressions interface {
	Suppression(ctx context.Context, accountID, address string) (suppressiondb.Suppression, error)
}

// Activities holds the dependencies of the invite activities.
type Activities struct {
	Invites Invites
	// TemplateStore keeps the shop's templates and their test sends,
	// which Templates renders.
	TemplateStore TemplateStore
	// Suppressions is the suppression list a test send is checked
	// against.
	Suppressions Suppressions
	Accounts     Accounts
	Mailer       mail.Sender
	SMS          SMSSender // nil: no SMS provider
	Templates    *templates.Set
	// SMSTemplates render the text messages; required with SMS.
	SMSTemplates *templates.SMSSet
	Feedback     *signedlink.Links
	// Unsubscribe makes the one-click unsubscribe links of invites and
	// reminders (RFC 8058); nil leaves them out.
	Unsubscribe *signedlink.Links
	Clock       func() time.Time // nil: time.Now
	Logger      *slog.Logger     // nil: discard
}

// The steps of the send pipeline: one set for both kinds of send, the
// invite and its reminder, each taking the kind in its input (an input
// without one, recorded before, is the invite's). The store applies the
// rule of the invite package for the kind.

// LoadPlan reads what scheduling the send starts from (a local activity:
// one read): for an invite the event's schedule copy and whether its
// event type and setting are active; for a reminder the setting's
// reminder delay from the time the invite was sent (Plan.Delay "": none).
func (a *Activities) LoadPlan(ctx context.Context, in workflows.EventInput) (invite.Plan, error) {
	k, err := kindOf(in.Kind)
	if err != nil {
		return invite.Plan{}, err
	}
	p, err := a.Invites.LoadPlan(ctx, k, in.EventID)
	return p, storeError(err)
}

// MarkScheduled records the send time (invite.Schedule): an invite
// pending, failed or scheduled; a reminder once, for a sent invite.
func (a *Activities) MarkScheduled(ctx context.Context, in workflows.MarkScheduledInput) (invite.State, error) {
	k, err := kindOf(in.Kind)
	if err != nil {
		return invite.State{}, err
	}
	st, err := a.Invites.MarkScheduled(ctx, k, in.EventID, in.ScheduledFor)
	return st, storeError(err)
}

// MarkSkipped records that the send does not go out (invite.Skip).
func (a *Activities) MarkSkipped(ctx context.Context, in workflows.MarkSkippedInput) (invite.State, error) {
	k, err := kindOf(in.Kind)
	if err != nil {
		return invite.State{}, err
	}
	st, err := a.Invites.MarkSkipped(ctx, k, in.EventID, in.Reason)
	if err == nil {
		a.logger().InfoContext(ctx, string(k)+" skipped", "event_id", in.EventID, "reason", st.Reason, "status", st.Status)
	}
	return st, storeError(err)
}

// MarkCancelled cancels a send that has not begun (a cancel signal from
// the Temporal UI; the API has cancelled already and this is a no-op).
func (a *Activities) MarkCancelled(ctx context.Context, in workflows.EventInput) (invite.State, error) {
	k, err := kindOf(in.Kind)
	if err != nil {
		return invite.State{}, err
	}
	st, err := a.Invites.MarkCancelled(ctx, k, in.EventID)
	return st, storeError(err)
}

// MarkFailed gives up on a send (invite.GiveUp): scheduled → given up
// with the reason; left sending → delivery_uncertain; otherwise
// unchanged, so it also just reads back a verdict Send has recorded.
func (a *Activities) MarkFailed(ctx context.Context, in workflows.MarkFailedInput) (invite.State, error) {
	k, err := kindOf(in.Kind)
	if err != nil {
		return invite.State{}, err
	}
	st, err := a.Invites.GiveUp(ctx, k, in.EventID, in.Reason, in.LastError)
	if err == nil {
		a.logger().WarnContext(ctx, string(k)+" failed", "event_id", in.EventID, "reason", st.Reason, "last_error", st.LastError)
	}
	return st, storeError(err)
}

// RecordSent records a delivery that Send could not record.
func (a *Activities) RecordSent(ctx context.Context, in workflows.RecordSentInput) (invite.State, error) {
	k, err := kindOf(in.Kind)
	if err != nil {
		return invite.State{}, err
	}
	st, err := a.Invites.FinishSend(ctx, k, in.EventID, invite.SendResult{SentAt: in.SentAt})
	return st, storeError(err)
}

// Send delivers the invite or the reminder at most once: it renders the
// message, claims the send (the record-before step: still scheduled? the
// setting still active? suppressed? throttled? reviewed? → sending),
// delivers it and records the outcome. A claim that does not allow a send
// ends the attempt with the state found (sent, skipped, cancelled) or, for
// a failed invite, a non-retryable error; a transient delivery failure
// sets the send back to scheduled and returns a retryable error. A send
// given up for good fails an invite (a non-retryable error) and skips a
// reminder (its state, no error: the invite was sent).
func (a *Activities) Send(ctx context.Context, in workflows.EventInput) (invite.State, error) {
	k, err := kindOf(in.Kind)
	if err != nil {
		return invite.State{}, err
	}
	content, err := a.Invites.LoadInviteContent(ctx, in.EventID)
	if err != nil {
		return invite.State{}, storeError(err)
	}
	// Rendered before the claim, so a template error never leaves the
	// send marked sending. It is retried: a fixed deployment recovers.
	msg, err := a.render(ctx, content, k == invite.KindReminder)
	if err != nil {
		return invite.State{}, err
	}
	claim, err := a.Invites.ClaimSend(ctx, k, in.EventID, a.claimOptions(content))
	if err != nil {
		return invite.State{}, storeError(err)
	}
	log := a.logger().With("event_id", in.EventID)
	if !claim.Send {
		st := claim.State
		log.InfoContext(ctx, string(k)+" not sent", "status", st.Status, "reason", st.Reason)
		return st, givenUpError(k, st)
	}

	a.recordTemplate(ctx, in.EventID, templateKind(k), claim.State.Medium, msg)
	err = a.deliver(ctx, claim.State.Medium, claim.Address, content, msg, k == invite.KindReminder)
	if err == nil {
		sentAt := a.now()
		st, ferr := a.Invites.FinishSend(ctx, k, in.EventID, invite.SendResult{SentAt: sentAt})
		if ferr != nil {
			log.ErrorContext(ctx, string(k)+" sent but not recorded; the workflow records it", "error", ferr)
			return invite.State{}, sentUnrecorded(ferr, sentAt)
		}
		log.InfoContext(ctx, string(k)+" sent", "medium", claim.State.Medium, "attempt", st.Attempts)
		return st, nil
	}

	kind, out := outcomeOf(err, claim.Address)
	st, ferr := a.Invites.FinishSend(ctx, k, in.EventID, out)
	if ferr != nil {
		// The send stays sending; the next attempt gives it up as
		// delivery_uncertain rather than risk a second send.
		return invite.State{}, storeError(ferr)
	}
	log.WarnContext(ctx, string(k)+" delivery failed", "kind", kind.String(), "to", maskFor(claim.State.Medium, claim.Address),
		"error", err.Error(), "attempt", st.Attempts)
	if kind == senderr.Transient {
		return st, temporal.NewApplicationError(err.Error(), workflows.ErrTypeTransient)
	}
	if k == invite.KindInvite {
		return st, failedError(st)
	}
	return st, nil
}

// kindOf is the kind of send a step's input names; an input recorded
// before steps took a kind is the invite's. An unknown kind is an input
// error (non-retryable).
func kindOf(k invite.Kind) (invite.Kind, error) {
	if k == "" {
		return invite.KindInvite, nil
	}
	if !k.Valid() {
		return "", temporal.NewNonRetryableApplicationError("unknown kind of send "+strconv.Quote(string(k)), workflows.ErrTypeBadInput, nil)
	}
	return k, nil
}

// givenUpError is the error of a claim that ended the send without
// sending it: none, unless an invite was found failed.
func givenUpError(k invite.Kind, st invite.State) error {
	if k == invite.KindInvite && st.Status == invite.Failed {
		return failedError(st)
	}
	return nil
}

// templateKind is the template a send of kind k renders.
func templateKind(k invite.Kind) templates.Kind {
	if k == invite.KindReminder {
		return templates.KindReminder
	}
	return templates.KindInvite
}

// deliver sends a rendered invite or reminder by its medium.
func (a *Activities) deliver(ctx context.Context, medium invite.Medium, address string, c invitedb.InviteContent,
	msg rendered, reminder bool) error {
	if medium == invite.SMS {
		if msg.text == "" { // the claim found a number render did not: a bug, not worth a retry
			return &senderr.Error{Kind: senderr.Permanent, Text: "sms: no text rendered"}
		}
		sid, err := a.SMS.SendSMS(ctx, SMS{EventID: c.EventID, Reminder: reminder, To: address, Text: msg.text})
		if err == nil {
			a.logger().InfoContext(ctx, "sms accepted by the provider", "event_id", c.EventID, "reminder", reminder, "message_sid", sid)
		}
		return err
	}
	b := c.Account.Brand()
	m := msg.mail
	return a.Mailer.Send(ctx, mail.Message{EventID: c.EventID, Reminder: reminder, To: c.Email,
		ToName: joinName(c.FirstName, c.LastName), FromName: b.DisplayName, ReplyTo: b.ReplyTo, Locale: m.Locale,
		Subject: m.Subject, Text: m.Text, HTML: m.HTML, UnsubscribeURL: a.unsubscribeURL(c.EventID)})
}

// outcomeOf classifies a failed delivery by the senders' one vocabulary
// (senderr): err's text never holds the full address. It is not passed
// on as a cause, because the SDK would serialise the errors it wraps,
// too. A permanent refusal may suppress the address (suppressionOf).
func outcomeOf(err error, address string) (senderr.Kind, invite.SendResult) {
	kind := senderr.KindOf(err)
	out := invite.SendResult{Error: err.Error(), Address: address}
	switch kind {
	case senderr.Transient:
		out.Retry = true
	case senderr.Permanent:
		out.Reason = invite.Rejected
		out.Suppress = suppressionOf(senderr.RecipientOf(err))
	case senderr.Uncertain:
		out.Reason = invite.DeliveryUncertain
	}
	return kind, out
}

// suppressionOf is the suppression a permanent refusal calls for: the
// customer had opted out of the sender's messages (unsubscribed), or the
// address or number itself was refused for good (bounced). A refusal that
// is no fault of the recipient (the message, the sender's account, a
// region it may not send to) suppresses nothing: the invite, failed as
// rejected, can be retried once that is fixed.
func suppressionOf(r senderr.Recipient) invite.SuppressionReason {
	switch r {
	case senderr.RecipientOptedOut:
		return invite.Unsubscribed
	case senderr.RecipientRefused:
		return invite.Bounced
	}
	return ""
}

// sentUnrecorded is the non-retryable error of a delivery whose record
// failed: the workflow records it, as sending again would duplicate it.
func sentUnrecorded(err error, sentAt time.Time) error {
	return temporal.NewNonRetryableApplicationError("sent but not recorded: "+err.Error(),
		workflows.ErrTypeSentUnrecorded, nil, workflows.SentUnrecorded{SentAt: sentAt})
}

// claimOptions are what a claim needs of this worker and the customer.
func (a *Activities) claimOptions(c invitedb.InviteContent) invitedb.ClaimOptions {
	return invitedb.ClaimOptions{SMSEnabled: a.SMS != nil, Mobile: normalizeMobile(c.Mobile, c.Locale)}
}

// normalizeMobile is the customer's number in E.164, or "" when it is
// missing or no valid mobile number (the invite is then skipped as
// no_address).
func normalizeMobile(raw, locale string) string {
	if strings.TrimSpace(raw) == "" {
		return ""
	}
	n, err := sms.NormalizeMobile(raw, locale)
	if err != nil {
		return ""
	}
	return n
}

// unsubscribeURL is the event's signed one-click unsubscribe link, or ""
// without an unsubscribe link maker.
func (a *Activities) unsubscribeURL(eventID string) string {
	if a.Unsubscribe == nil {
		return ""
	}
	return a.Unsubscribe.URL(eventID)
}

// failedError is the non-retryable error for an invite recorded failed.
func failedError(st invite.State) error {
	typ := workflows.ErrTypeRejected
	switch st.Reason {
	case invite.DeliveryUncertain:
		typ = workflows.ErrTypeUncertain
	case invite.NoProvider:
		typ = workflows.ErrTypeNoProvider
	}
	msg := "invite failed: " + string(st.Reason)
	if st.LastError != "" {
		msg += ": " + st.LastError
	}
	return temporal.NewNonRetryableApplicationError(msg, typ, nil)
}

// storeError makes a missing event non-retryable; other store errors
// (PostgreSQL down) are retried.
func storeError(err error) error {
	if errors.Is(err, pg.ErrNotFound) {
		return temporal.NewNonRetryableApplicationError("event not found", workflows.ErrTypeNotFound, nil)
	}
	return err
}

func joinName(first, last string) string {
	switch {
	case first == "":
		return last
	case last == "":
		return first
	}
	return first + " " + last
}

func maskFor(medium invite.Medium, to string) string {
	if medium == invite.SMS && len(to) > 4 {
		return "***" + to[len(to)-4:]
	}
	return to // an email is masked already
}

func (a *Activities) now() time.Time {
	if a.Clock != nil {
		return a.Clock()
	}
	return time.Now()
}

func (a *Activities) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.New(slog.DiscardHandler)
}
