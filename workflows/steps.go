package workflows

import (
	"time"

	"github.com/touchpoint/touchpoint/invite"
)

// The send pipeline's steps are activities that the worker registers from
// activities.Activities, whose method names are these. An event's invite
// and its reminder are two kinds of one send (invite.Kind): both run the
// same steps, with the kind in each step's input. The workflow calls them
// by name, so it needs none of the packages that do the I/O; the worker's
// tests check that every name here is registered.
const (
	// LoadPlan (local) reads what scheduling the send starts from:
	// invite.Plan (for a reminder, Plan.Delay "" means none is due).
	LoadPlanActivity = "LoadPlan"
	// MarkScheduled (local) records the send time: invite.State.
	MarkScheduledActivity = "MarkScheduled"
	// MarkSkipped (local) records that the send does not go out:
	// invite.State.
	MarkSkippedActivity = "MarkSkipped"
	// MarkCancelled (local) records a cancel: invite.State.
	MarkCancelledActivity = "MarkCancelled"
	// MarkFailed (local) gives up on the send: invite.State.
	MarkFailedActivity = "MarkFailed"
	// RecordSent (local) records a delivery Send could not record.
	RecordSentActivity = "RecordSent"
	// Send delivers the send at most once: invite.State.
	SendActivity = "Send"
)

// The step names of runs begun before invite and reminder shared one
// pipeline: their histories name these, so the worker keeps them
// registered, each mapped to the step above with its kind, and those
// runs go on calling them (see pipelineChange). The invite's other steps
// kept their names; an input recorded without a kind is an invite's.
const (
	// SendInvite is Send of an invite: invite.State.
	SendInviteActivity = "SendInvite"
	// LoadReminderPlan is LoadPlan of a reminder: invite.ReminderPlan.
	LoadReminderPlanActivity = "LoadReminderPlan"
	// MarkReminderScheduled is MarkScheduled of a reminder: invite.Reminder.
	MarkReminderScheduledActivity = "MarkReminderScheduled"
	// MarkReminderSkipped is MarkSkipped of a reminder: invite.Reminder.
	MarkReminderSkippedActivity = "MarkReminderSkipped"
	// MarkReminderCancelled is MarkCancelled of a reminder: invite.Reminder.
	MarkReminderCancelledActivity = "MarkReminderCancelled"
	// RecordReminderSent is RecordSent of a reminder: invite.Reminder.
	RecordReminderSentActivity = "RecordReminderSent"
	// SendReminder is Send of a reminder: invite.Reminder.
	SendReminderActivity = "SendReminder"
)

// legacyStep is the name under which a run begun before the one pipeline
// calls step for a send of kind k.
func legacyStep(k invite.Kind, step string) string {
	if k == invite.KindInvite {
		if step == SendActivity {
			return SendInviteActivity
		}
		return step
	}
	switch step {
	case LoadPlanActivity:
		return LoadReminderPlanActivity
	case MarkScheduledActivity:
		return MarkReminderScheduledActivity
	case MarkSkippedActivity:
		return MarkReminderSkippedActivity
	case MarkCancelledActivity:
		return MarkReminderCancelledActivity
	case RecordSentActivity:
		return RecordReminderSentActivity
	case SendActivity:
		return SendReminderActivity
	}
	return step // a reminder never failed: it was skipped
}

// Application error types of the steps, for the workflow to branch on.
const (
	// ErrTypeNotFound: the event does not exist (non-retryable).
	ErrTypeNotFound = "EventNotFound"
	// ErrTypeTransient: the send failed for now; the invite is scheduled
	// again with last_error and the activity is retried.
	ErrTypeTransient = "DeliveryTransient"
	// ErrTypeRejected: the server refused the recipient or message for
	// good; the invite is failed (non-retryable).
	ErrTypeRejected = "DeliveryRejected"
	// ErrTypeUncertain: the invite may or may not have been delivered; it
	// is failed as delivery_uncertain and not sent again (non-retryable).
	ErrTypeUncertain = "DeliveryUncertain"
	// ErrTypeNoProvider: no provider for the medium; failed (non-retryable).
	ErrTypeNoProvider = "NoProvider"
	// ErrTypeSentUnrecorded: the send was delivered but recording it
	// failed; the details hold SentUnrecorded for the workflow to record
	// it with RecordSent (non-retryable: sending again would duplicate).
	ErrTypeSentUnrecorded = "SentUnrecorded"
	// ErrTypeBadInput: a step's input names no known kind of send
	// (non-retryable).
	ErrTypeBadInput = "BadStepInput"
)

// Every step's input names the event and the kind of its send. An input
// recorded before the kind was part of it has none: it is the invite's.

// EventInput names the send a step works on.
type EventInput struct {
	EventID string
	Kind    invite.Kind
}

// MarkScheduledInput is the resolved send time.
type MarkScheduledInput struct {
	EventID      string
	Kind         invite.Kind
	ScheduledFor time.Time
}

// MarkSkippedInput is why a send does not go out.
type MarkSkippedInput struct {
	EventID string
	Kind    invite.Kind
	Reason  invite.Reason
}

// MarkFailedInput is why the workflow gave up on a send.
type MarkFailedInput struct {
	EventID   string
	Kind      invite.Kind
	Reason    invite.Reason
	LastError string
}

// RecordSentInput is a delivery that Send could not record.
type RecordSentInput struct {
	EventID string
	Kind    invite.Kind
	SentAt  time.Time
}

// SentUnrecorded is the detail of an ErrTypeSentUnrecorded error.
type SentUnrecorded struct {
	SentAt time.Time
}
