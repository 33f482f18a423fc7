package workflows

import (
	"time"

	"github.com/touchpoint/touchpoint/invite"
)

// The invite workflow's steps are activities that the worker registers
// from activities.Activities, whose method names are these. The workflow
// calls them by name, so it needs none of the packages that do the I/O;
// the worker's tests check that every name here is registered.
const (
	// LoadPlan (local) reads the event's schedule copy: invite.Plan.
	LoadPlanActivity = "LoadPlan"
	// MarkScheduled (local) records the send time: invite.State.
	MarkScheduledActivity = "MarkScheduled"
	// MarkSkipped (local) records that no invite is sent: invite.State.
	MarkSkippedActivity = "MarkSkipped"
	// MarkCancelled (local) records a cancel: invite.State.
	MarkCancelledActivity = "MarkCancelled"
	// MarkFailed (local) gives up on the invite: invite.State.
	MarkFailedActivity = "MarkFailed"
	// RecordSent (local) records a delivery SendInvite could not record.
	RecordSentActivity = "RecordSent"
	// SendInvite delivers the invite at most once: invite.State.
	SendInviteActivity = "SendInvite"

	// LoadReminderPlan (local) reads what the reminder starts from:
	// invite.ReminderPlan.
	LoadReminderPlanActivity = "LoadReminderPlan"
	// MarkReminderScheduled (local) plans the reminder: invite.Reminder.
	MarkReminderScheduledActivity = "MarkReminderScheduled"
	// MarkReminderSkipped (local) records a reminder not sent.
	MarkReminderSkippedActivity = "MarkReminderSkipped"
	// MarkReminderCancelled (local) records a cancelled reminder.
	MarkReminderCancelledActivity = "MarkReminderCancelled"
	// RecordReminderSent (local) records a delivery SendReminder could
	// not record.
	RecordReminderSentActivity = "RecordReminderSent"
	// SendReminder delivers the reminder at most once: invite.Reminder.
	SendReminderActivity = "SendReminder"
)

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
	// ErrTypeSentUnrecorded: the invite was delivered but recording it
	// failed; the details hold SentUnrecorded for the workflow to record
	// it with RecordSent (non-retryable: sending again would duplicate).
	ErrTypeSentUnrecorded = "SentUnrecorded"
)

// EventInput names the event a step works on.
type EventInput struct {
	EventID string
}

// MarkScheduledInput is the resolved send time of an invite.
type MarkScheduledInput struct {
	EventID      string
	ScheduledFor time.Time
}

// MarkSkippedInput is why an invite is not sent.
type MarkSkippedInput struct {
	EventID string
	Reason  invite.Reason
}

// MarkFailedInput is why the workflow gave up on an invite.
type MarkFailedInput struct {
	EventID   string
	Reason    invite.Reason
	LastError string
}

// MarkReminderSkippedInput is why a reminder is not sent.
type MarkReminderSkippedInput struct {
	EventID string
	Reason  invite.Reason
}

// RecordSentInput is a delivery that SendInvite could not record.
type RecordSentInput struct {
	EventID string
	SentAt  time.Time
}

// SentUnrecorded is the detail of an ErrTypeSentUnrecorded error.
type SentUnrecorded struct {
	SentAt time.Time
}
