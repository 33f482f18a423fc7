package workflows

import (
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/touchpoint/touchpoint/invite"
)

// TaskQueue is the task queue of invite workflows and their activities.
const TaskQueue = "invites"

// WorkflowType is the registered name of the invite workflow (the name of
// Invite, under which the worker registers InviteWith).
const WorkflowType = "Invite"

// WorkflowID is the ID of an event's invite workflow: the event ID, so
// support staff find it in the Temporal UI by the ID the API returned.
func WorkflowID(eventID string) string { return eventID }

// InviteInput starts an invite workflow. It carries no customer data:
// activities read the address and name from PostgreSQL.
type InviteInput struct {
	EventID           string
	AccountID         string
	EventTypeID       string
	ChannelID         string
	CustomerReference string // the client's own reference, not personal data
	// Retry marks a run started to re-send a failed invite (API, CLI): it
	// sends now, skipping the delay and the send window, but re-checks the
	// setting and the throttle.
	Retry bool
}

// InviteResult is how an invite ended; the status query answers with the
// same shape for the state so far.
type InviteResult struct {
	Status       invite.Status `json:"status"`
	Reason       invite.Reason `json:"reason,omitempty"`
	ScheduledFor time.Time     `json:"scheduledFor,omitzero"`
	SentAt       time.Time     `json:"sentAt,omitzero"`
	Attempts     int           `json:"attempts"`
	LastError    string        `json:"lastError,omitempty"`
	// Reminder is the reminder's state once one is planned.
	Reminder *invite.Reminder `json:"reminder,omitempty"`
}

// CancelSignal is the signal that cancels a waiting invite. The API sends
// it after it has cancelled the invite in PostgreSQL; sent from the
// Temporal UI (with any input, or none), the workflow records the cancel
// itself — unless the send has begun, in which case it has no effect.
// A cancel request from the UI ("Cancel workflow") is handled alike and
// ends the run as Cancelled.
const CancelSignal = "cancel"

// ReviewSignal tells a waiting reminder that the customer has reviewed:
// the API sends it when it stores a review, and the reminder is then not
// sent. The send step checks PostgreSQL as well, so a lost signal cannot
// cause a reminder after a review.
const ReviewSignal = "review-received"

// ReviewReceived is the input of ReviewSignal.
type ReviewReceived struct {
	ReviewID string
}

// CancelRequest is the input of CancelSignal. The workflow does not read
// it (a signal from the UI may carry anything, or nothing); Source shows
// in the history who cancelled ("api", "cli", …).
type CancelRequest struct {
	Source string
}

// InvitesMetric counts the runs that ended, by the invite's status and
// reason, through the worker's metrics handler (in Prometheus with the
// SDK's labels: touchpoint_invites{status="sent",reason="",…}).
const InvitesMetric = "touchpoint_invites"

// RemindersMetric counts the reminders that ended, by status and reason.
const RemindersMetric = "touchpoint_reminders"

// StatusQuery answers with an InviteResult: the invite's state so far.
// While the send is retried, the pending activity in the Temporal UI shows
// the attempt and its last failure.
const StatusQuery = "status"

// ErrTypeInviteFailed is the type of the error a workflow whose invite
// failed ends with (visible as Failed in the Temporal UI).
const ErrTypeInviteFailed = "InviteFailed"

// Custom search attributes (all Keyword), for finding invites in the
// Temporal UI: `TouchpointInviteStatus = "failed"`.
var (
	AccountIDKey         = temporal.NewSearchAttributeKeyKeyword("TouchpointAccountId")
	EventTypeIDKey       = temporal.NewSearchAttributeKeyKeyword("TouchpointEventTypeId")
	ChannelIDKey         = temporal.NewSearchAttributeKeyKeyword("TouchpointChannelId")
	InviteStatusKey      = temporal.NewSearchAttributeKeyKeyword("TouchpointInviteStatus")
	CustomerReferenceKey = temporal.NewSearchAttributeKeyKeyword("TouchpointCustomerReference")
)

// SearchAttributes are the custom search attributes (name → type) that
// `touchpoint migrate` and `touchpoint dev` register on the namespace.
func SearchAttributes() map[string]enumspb.IndexedValueType {
	m := map[string]enumspb.IndexedValueType{}
	for _, k := range []temporal.SearchAttributeKeyKeyword{AccountIDKey, EventTypeIDKey, ChannelIDKey, InviteStatusKey, CustomerReferenceKey} {
		m[k.GetName()] = k.GetValueType()
	}
	return m
}

// StartSearchAttributes are the search attributes an invite workflow is
// started with; the workflow keeps the status up to date.
func StartSearchAttributes(in InviteInput) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(identity(in, invite.Pending)...)
}

func identity(in InviteInput, status invite.Status) []temporal.SearchAttributeUpdate {
	u := []temporal.SearchAttributeUpdate{
		AccountIDKey.ValueSet(in.AccountID),
		EventTypeIDKey.ValueSet(in.EventTypeID),
		ChannelIDKey.ValueSet(in.ChannelID),
		InviteStatusKey.ValueSet(string(status)),
	}
	if in.CustomerReference != "" {
		u = append(u, CustomerReferenceKey.ValueSet(in.CustomerReference))
	}
	return u
}
