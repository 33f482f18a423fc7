// Package activities holds the invite workflow's activities: every step
// that reads or writes PostgreSQL, renders, or delivers. They are
// idempotent — each is a guarded transition of the invite state in the
// events table (store/invites.go) — so Temporal may run any of them again.
//
// Customer data (address, name, mobile) is loaded here from PostgreSQL and
// never returned to Temporal: results carry only invite states, and error
// texts mask addresses.
package activities

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/touchpoint/touchpoint/feedback"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/workflows"
)

// SMSSender delivers an invite as a text message. None is built in yet:
// with Activities.SMS nil, an invite whose setting's medium is sms is
// skipped (no_address) when the customer has no mobile number, and
// otherwise fails (reason no_provider, lastError "no SMS provider
// configured"), so ops can find those invites and retry them once a
// provider exists. Return a *mail.Error with Kind mail.Permanent for a
// number the provider refuses for good; other errors are retried.
type SMSSender interface {
	SendSMS(ctx context.Context, m SMS) error
}

// SMS is one text message.
type SMS struct {
	EventID string
	To      string
	Text    string
}

// Activities holds the dependencies of the invite activities.
type Activities struct {
	Store     *store.Store
	Mailer    mail.Sender
	SMS       SMSSender // nil: no SMS provider
	Templates *templates.Set
	Feedback  *feedback.Links
	Clock     func() time.Time // nil: time.Now
	Logger    *slog.Logger     // nil: discard
}

// LoadPlan loads the event's schedule copy and whether its event type and
// setting are active (a local activity: one read).
func (a *Activities) LoadPlan(ctx context.Context, in workflows.EventInput) (invite.Plan, error) {
	p, err := a.Store.LoadInvitePlan(ctx, in.EventID)
	return p, storeError(err)
}

// MarkScheduled records the send time (pending, failed or scheduled only).
func (a *Activities) MarkScheduled(ctx context.Context, in workflows.MarkScheduledInput) (invite.State, error) {
	st, err := a.Store.MarkInviteScheduled(ctx, in.EventID, in.ScheduledFor)
	return st, storeError(err)
}

// MarkSkipped records that no invite is sent (pending, scheduled or failed only).
func (a *Activities) MarkSkipped(ctx context.Context, in workflows.MarkSkippedInput) (invite.State, error) {
	st, err := a.Store.MarkInviteSkipped(ctx, in.EventID, in.Reason)
	if err == nil {
		a.logger().InfoContext(ctx, "invite skipped", "event_id", in.EventID, "reason", st.Reason, "status", st.Status)
	}
	return st, storeError(err)
}

// MarkCancelled cancels a pending or scheduled invite (a cancel signal from
// the Temporal UI; the API has cancelled already and this is a no-op).
func (a *Activities) MarkCancelled(ctx context.Context, in workflows.EventInput) (invite.State, error) {
	st, err := a.Store.MarkInviteCancelled(ctx, in.EventID)
	return st, storeError(err)
}

// MarkFailed gives up on an invite: scheduled → failed with the reason;
// left sending → failed as delivery_uncertain; otherwise unchanged, so it
// also just reads back a failure SendInvite has recorded itself.
func (a *Activities) MarkFailed(ctx context.Context, in workflows.MarkFailedInput) (invite.State, error) {
	st, err := a.Store.MarkInviteFailed(ctx, in.EventID, in.Reason, in.LastError)
	if err == nil {
		a.logger().WarnContext(ctx, "invite failed", "event_id", in.EventID, "reason", st.Reason, "last_error", st.LastError)
	}
	return st, storeError(err)
}

// RecordSent records a delivery that SendInvite could not record.
func (a *Activities) RecordSent(ctx context.Context, in workflows.RecordSentInput) (invite.State, error) {
	st, err := a.Store.FinishInviteSend(ctx, in.EventID, store.SendOutcome{SentAt: in.SentAt})
	return st, storeError(err)
}

// SendInvite delivers the invite at most once (SPEC §10): it renders the
// invite, claims the send (the record-before step: still scheduled? the
// setting still active? throttled? → sending), delivers it and records the
// outcome. A claim that does not allow a send ends the attempt with the
// state found (sent, skipped, cancelled) or, for a failure, a
// non-retryable error; a transient delivery failure sets the invite back
// to scheduled and returns a retryable error.
func (a *Activities) SendInvite(ctx context.Context, in workflows.EventInput) (invite.State, error) {
	content, err := a.Store.LoadInviteContent(ctx, in.EventID)
	if err != nil {
		return invite.State{}, storeError(err)
	}
	// Rendered before the claim, so a template error never leaves the
	// invite marked sending. It is retried: a fixed deployment recovers.
	msg, err := a.Templates.Render(content.Locale, a.templateData(content))
	if err != nil {
		return invite.State{}, err
	}
	claim, err := a.Store.ClaimInviteSend(ctx, in.EventID, store.ClaimOptions{SMSEnabled: a.SMS != nil})
	if err != nil {
		return invite.State{}, storeError(err)
	}
	log := a.logger().With("event_id", in.EventID)
	if !claim.Send {
		st := claim.State
		log.InfoContext(ctx, "invite not sent", "status", st.Status, "reason", st.Reason)
		if st.Status == invite.Failed {
			return st, failedError(st)
		}
		return st, nil
	}

	var to string
	if claim.State.Medium == invite.SMS {
		to = content.Mobile
		err = a.SMS.SendSMS(ctx, SMS{EventID: in.EventID, To: to, Text: msg.Subject + "\n" + a.Feedback.URL(in.EventID)})
	} else {
		to = mail.MaskEmail(content.Email)
		err = a.Mailer.Send(ctx, mail.Message{EventID: in.EventID, To: content.Email,
			ToName: joinName(content.FirstName, content.LastName), Locale: msg.Locale,
			Subject: msg.Subject, Text: msg.Text, HTML: msg.HTML})
	}
	if err == nil {
		sentAt := a.now()
		st, ferr := a.Store.FinishInviteSend(ctx, in.EventID, store.SendOutcome{SentAt: sentAt})
		if ferr != nil {
			log.ErrorContext(ctx, "invite sent but not recorded; the workflow records it", "error", ferr)
			return invite.State{}, temporal.NewNonRetryableApplicationError("invite sent but not recorded: "+ferr.Error(),
				workflows.ErrTypeSentUnrecorded, nil, workflows.SentUnrecorded{SentAt: sentAt})
		}
		log.InfoContext(ctx, "invite sent", "medium", st.Medium, "attempt", st.Attempts)
		return st, nil
	}

	// err is a *mail.Error (or an SMS provider's error): its text never
	// holds the full address. It is not passed on as a cause, because the
	// SDK would serialise the errors it wraps, too.
	kind := mail.KindOf(err)
	out := store.SendOutcome{Error: err.Error()}
	switch kind {
	case mail.Transient:
		out.Retry = true
	case mail.Permanent:
		out.Reason = invite.Rejected
		out.SuppressAddress = claim.State.Medium == invite.Email && mail.RecipientRefused(err)
	case mail.Uncertain:
		out.Reason = invite.DeliveryUncertain
	}
	st, ferr := a.Store.FinishInviteSend(ctx, in.EventID, out)
	if ferr != nil {
		// The invite stays sending; the next attempt fails it as
		// delivery_uncertain rather than risk a second send.
		return invite.State{}, storeError(ferr)
	}
	log.WarnContext(ctx, "invite delivery failed", "kind", kind.String(), "to", maskFor(claim.State.Medium, to), "error", err.Error(), "attempt", st.Attempts)
	if kind == mail.Transient {
		return st, temporal.NewApplicationError(err.Error(), workflows.ErrTypeTransient)
	}
	return st, failedError(st)
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
	if errors.Is(err, store.ErrNotFound) {
		return temporal.NewNonRetryableApplicationError("event not found", workflows.ErrTypeNotFound, nil)
	}
	return err
}

func (a *Activities) templateData(c store.InviteContent) templates.Data {
	d := templates.Data{FirstName: c.FirstName, FeedbackURL: a.Feedback.URL(c.EventID)}
	for _, p := range c.Products {
		d.Products = append(d.Products, templates.Product{Name: p.Name, ImageURL: p.ImageURL, URL: p.URL})
	}
	return d
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
