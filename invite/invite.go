// Package invite is the vocabulary every part of Touchpoint uses to speak
// about an invite — its status, why it was skipped or failed, the medium it
// travels by, the state an invite workflow records step by step — and the
// rules that move that state (rules.go): pure functions from a state and
// the facts read to the next state and what to emit, which the store runs
// under the event's row lock.
//
// An invite and its reminder are two kinds (Kind) of one send: the same
// state machine, claim and outcomes, apart from the few rules in which
// the kinds differ.
//
// It is a leaf: it imports nothing of ours but the pure schedule package,
// so the store, the workflows, the activities and the API can all share
// one spelling of each value — the spelling of the API and the database.
package invite

import (
	"slices"
	"time"

	"github.com/touchpoint/touchpoint/sendtime"
)

// Status is where an invite stands.
type Status string

// Statuses. Sending is the record-before mark of a send in progress;
// the API shows it as Scheduled.
const (
	Pending   Status = "pending"
	Scheduled Status = "scheduled"
	Sending   Status = "sending"
	Sent      Status = "sent"
	Skipped   Status = "skipped"
	Failed    Status = "failed"
	Cancelled Status = "cancelled"
)

var apiStatuses = []Status{Pending, Scheduled, Sent, Skipped, Failed, Cancelled}

// APIStatuses returns the statuses the API shows and filters by, in their
// documented order; Sending is shown as Scheduled.
func APIStatuses() []Status { return slices.Clone(apiStatuses) }

// Valid reports whether s is a status an invite can have.
func (s Status) Valid() bool { return s == Sending || slices.Contains(apiStatuses, s) }

// API is the status as the API shows it: a send in progress is still
// planned, not yet done.
func (s Status) API() Status {
	if s == Sending {
		return Scheduled
	}
	return s
}

// Reason says why an invite was skipped or failed.
type Reason string

// Reasons of skipped invites.
const (
	EventTypeInactive Reason = "event_type_inactive"
	SettingInactive   Reason = "setting_inactive"
	RecentlyInvited   Reason = "recently_invited"
	// Suppressed: the address is on the account's suppression list.
	Suppressed Reason = "suppressed"
	NoAddress  Reason = "no_address"
	// QuotaExceeded: the account's daily send quota, or its daily cap of
	// invites to one address, was used up when the invite was due.
	QuotaExceeded Reason = "quota_exceeded"
)

// Reviewed: a reminder found the customer's review already there.
const Reviewed Reason = "reviewed"

// Reasons of failed invites.
const (
	// DeliveryUncertain: an attempt found the mark of an interrupted send;
	// the invite may or may not have arrived, so it is not sent again.
	DeliveryUncertain Reason = "delivery_uncertain"
	// Rejected: the provider refused the recipient or message for good.
	Rejected Reason = "rejected"
	// RetriesExhausted: transient errors until the send gave up.
	RetriesExhausted Reason = "retries_exhausted"
	// NoProvider: the medium has no provider configured.
	NoProvider Reason = "no_provider"
)

var reasons = []Reason{EventTypeInactive, SettingInactive, RecentlyInvited, Suppressed, NoAddress, Reviewed, QuotaExceeded,
	DeliveryUncertain, Rejected, RetriesExhausted, NoProvider}

// Reasons lists every reason.
func Reasons() []Reason { return slices.Clone(reasons) }

// Valid reports whether r is a known reason.
func (r Reason) Valid() bool { return slices.Contains(reasons, r) }

// Kind is what a send delivers: an event's invite, or the one reminder
// that may follow it once the invite is sent. Both go through one
// pipeline — one state machine (State), one claim, one send step — and
// Kind selects the few rules in which they differ (see rules.go).
type Kind string

// Kinds, as attempt rows, step inputs and webhook types spell them.
const (
	KindInvite   Kind = "invite"
	KindReminder Kind = "reminder"
)

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { return k == KindInvite || k == KindReminder }

// Medium is how an invite travels.
type Medium string

// Media.
const (
	Email Medium = "email"
	SMS   Medium = "sms"
)

// Valid reports whether m is a known medium.
func (m Medium) Valid() bool { return m == Email || m == SMS }

// SuppressionReason says why an address is on an account's suppression
// list.
type SuppressionReason string

// Suppression reasons.
const (
	// Unsubscribed: the customer asked (the unsubscribe link or page, an
	// SMS STOP).
	Unsubscribed SuppressionReason = "unsubscribed"
	// Bounced: the provider refused the address for good.
	Bounced SuppressionReason = "bounced"
	// Complained: the customer marked a message as spam.
	Complained SuppressionReason = "complained"
	// Manual: the shop put the address on the list.
	Manual SuppressionReason = "manual"
)

var suppressionReasons = []SuppressionReason{Unsubscribed, Bounced, Complained, Manual}

// SuppressionReasons lists every suppression reason.
func SuppressionReasons() []SuppressionReason { return slices.Clone(suppressionReasons) }

// Valid reports whether r is a known suppression reason.
func (r SuppressionReason) Valid() bool { return slices.Contains(suppressionReasons, r) }

// CustomersWish reports whether an entry of reason r records the
// customer's own wish to hear no more (unsubscribed, complained): it is
// lifted only with the customer's consent.
func (r SuppressionReason) CustomersWish() bool { return r == Unsubscribed || r == Complained }

// State is the state of one send of an event: the invite part of its row,
// or its reminder's (Medium, Attempts and LastError are then not stored:
// the medium is the setting's, the attempts are counted in the attempt
// rows, and the last error is kept in the attempt's detail only). It
// travels through Temporal as activity results, so it holds no customer
// data.
type State struct {
	Status       Status     `db:"invite_status" json:"status"`
	Reason       Reason     `db:"invite_reason" json:"reason,omitempty"`
	Medium       Medium     `db:"invite_medium" json:"medium,omitempty"`
	ScheduledFor *time.Time `db:"scheduled_for" json:"scheduledFor,omitempty"`
	SentAt       *time.Time `db:"sent_at" json:"sentAt,omitempty"`
	Attempts     int        `db:"attempts" json:"attempts"`
	LastError    string     `db:"last_error" json:"lastError,omitempty"`
}

// Plan is what scheduling a send starts from. For an invite: the schedule
// copied into the event at acceptance and whether its event type and
// invite setting are active now. For a reminder: the setting's reminder
// delay counted from the time the invite was sent, in the event's send
// window, with Status the reminder's; Plan.Delay is "" when no reminder
// is due (none configured, or the invite was not sent).
type Plan struct {
	Status          Status        `json:"status"`
	EventTypeActive bool          `json:"eventTypeActive"`
	SettingActive   bool          `json:"settingActive"`
	Plan            sendtime.Plan `json:"plan"`
}

// Reminder is the state of an invite's reminder as the API and the
// workflow's status query show it: Status is "" while none is planned,
// then Scheduled, Sending (the record-before mark), Sent, Skipped (with
// Reason) or Cancelled. The rules work on its State (KindReminder).
type Reminder struct {
	Status       Status     `db:"reminder_status" json:"status,omitempty"`
	Reason       Reason     `db:"reminder_reason" json:"reason,omitempty"`
	ScheduledFor *time.Time `db:"reminder_scheduled_for" json:"scheduledFor,omitempty"`
	SentAt       *time.Time `db:"reminder_sent_at" json:"sentAt,omitempty"`
}

// Reminder is s as the state of a reminder. Its JSON is a subset of
// State's, so a step that answered with a Reminder decodes into a State.
func (s State) Reminder() Reminder {
	return Reminder{Status: s.Status, Reason: s.Reason, ScheduledFor: s.ScheduledFor, SentAt: s.SentAt}
}

// ReminderPlan is what scheduling a reminder starts from: the invite's
// setting's reminder delay ("" means no reminder) counted from the time
// the invite was sent, moved into the event's send window.
type ReminderPlan struct {
	Delay string        `json:"delay,omitempty"`
	Plan  sendtime.Plan `json:"plan"`
}
