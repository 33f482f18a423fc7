package invite

import (
	"errors"
	"fmt"
)

// Change is what a rule decides: the send's state before and after, and
// everything the store must do with it in the transaction that writes it.
// The attempt row and the webhook follow from the move itself (so no
// transition can forget them); the other effects are a rule's own.
//
// Every change of a send's state is one Change, so a caller that counts
// or reports state changes (webhooks, attempt rows, rollups) sees each
// one in one place, with its kind, its statuses and its reasons.
type Change struct {
	Kind     Kind
	From, To State
	// Event is the webhook event type that reports the change
	// ("invite.sent", "reminder.sent", …), or "" when the shop does not
	// hear of it.
	Event string
	// Attempt is what the change does to the send's attempt rows.
	Attempt AttemptChange
	// Suppress, when set, puts Address on the account's suppression list
	// with this reason: the provider refused the address itself for good
	// (bounced), or the customer had opted out there (unsubscribed).
	Suppress SuppressionReason
	Address  string
	// Number, when set, is the mobile number (E.164) an SMS is about to go
	// to: the event keeps it, for the SMS throttle and for a STOP reply.
	Number string
	// Run, when set, orders a new workflow run of the invite through the
	// outbox, of this kind.
	Run RunOrder

	changed bool
}

// Changed reports whether there is anything to write: false for a
// decision that finds the send where it should end (a repeated cancel).
func (c Change) Changed() bool { return c.changed }

// Sends reports whether the change claims the send: it is now marked
// sending, and the caller delivers it.
func (c Change) Sends() bool { return c.changed && c.To.Status == Sending && c.From.Status != Sending }

// RunOrder is the kind of an order for a new workflow run, as the outbox
// spells it.
type RunOrder string

// Run orders.
const (
	// RunStart is the first run, ordered by the event's acceptance.
	RunStart RunOrder = "start"
	// RunRetry re-sends a failed invite now, skipping its delay.
	RunRetry RunOrder = "retry"
	// RunRestart restarts an invite whose workflow is gone or closed,
	// keeping its schedule, or goes on with the waiting reminder of a sent
	// invite whose workflow is gone or closed.
	RunRestart RunOrder = "restart"
)

// AttemptOp is what a change does to the attempt rows of its kind.
type AttemptOp int

// Attempt operations.
const (
	// NoAttempt: the attempt rows stay as they are.
	NoAttempt AttemptOp = iota
	// AttemptStarted: a claim began attempt N, by Medium.
	AttemptStarted
	// AttemptFinished: attempt N ended with Outcome and Detail.
	AttemptFinished
	// AttemptDelivered: attempt N, judged uncertain, was delivered after
	// all (a record of a sent message must not be lost).
	AttemptDelivered
)

// AttemptChange is the attempt-row part of a Change. Attempts are
// numbered per kind, from 1.
type AttemptChange struct {
	Op      AttemptOp
	N       int
	Medium  Medium
	Outcome Outcome
	Detail  string
}

// Outcome is how a send attempt ended; "" while it runs.
type Outcome string

// Attempt outcomes.
const (
	// OutcomeSent: delivered to the provider.
	OutcomeSent Outcome = "sent"
	// OutcomeTransient: failed for now; another attempt follows.
	OutcomeTransient Outcome = "transient"
	// OutcomeRejected: refused for good (the address or the message).
	OutcomeRejected Outcome = "rejected"
	// OutcomeUncertain: interrupted after it began; it may have been
	// delivered, so it is not repeated.
	OutcomeUncertain Outcome = "uncertain"
	// OutcomeFailed: ended any other way.
	OutcomeFailed Outcome = "failed"
)

// DeliveredAfterAll is the detail of an attempt judged uncertain whose
// delivery was recorded later.
const DeliveredAfterAll = "delivered; recorded after the attempt had been judged uncertain"

// ErrRefused is matched (errors.Is) by every refusal: the rule does not
// apply to the state the send is in. The workflow's steps take a refusal
// as "nothing to do" and answer with the state found; the API answers it
// as a conflict.
var ErrRefused = errors.New("refused")

// Refusal says which rule a send's state refused.
type Refusal struct {
	Kind   Kind
	Rule   string // "schedule", "claim", "cancel", …
	Status Status // the state found
}

func (r *Refusal) Error() string {
	status := string(r.Status)
	if status == "" {
		status = "none"
	}
	return fmt.Sprintf("%s cannot %s from status %s", r.Kind, r.Rule, status)
}

// Is makes a Refusal match ErrRefused.
func (r *Refusal) Is(target error) bool { return target == ErrRefused }

// change is the Change of a move from → to, with the attempt row and the
// webhook that every such move implies.
func change(k Kind, from, to State) Change {
	return Change{Kind: k, From: from, To: to, Event: EventOf(k, from.Status, to.Status), Attempt: attempt(k, from, to), changed: true}
}

// unchanged is the Change of a decision that leaves cur as it is.
func unchanged(k Kind, cur State) Change { return Change{Kind: k, From: cur, To: cur} }

// refuse is the answer of a rule that does not apply to cur.
func refuse(k Kind, rule string, cur State) (Change, error) {
	return unchanged(k, cur), &Refusal{Kind: k, Rule: rule, Status: cur.Status}
}

// EventOf is the webhook event type that a send of kind k moving from
// one status to another reports, or "". The shop hears of an invite being
// scheduled, sent, skipped, failed or cancelled, and of a reminder being
// sent; not of pending and sending, which are steps, nor of a send set
// back to scheduled to be tried again.
func EventOf(k Kind, from, to Status) string {
	if from == to || (from == Sending && to == Scheduled) {
		return ""
	}
	switch {
	case k == KindInvite && (to == Scheduled || to == Sent || to == Skipped || to == Failed || to == Cancelled),
		k == KindReminder && to == Sent:
		return string(k) + "." + string(to)
	}
	return ""
}

// attempt is what a move does to the attempt rows: entering sending
// starts attempt to.Attempts; leaving it finishes attempt from.Attempts
// with the outcome read off the new state; a delivery recorded after a
// verdict of delivery_uncertain turns that attempt sent.
func attempt(k Kind, from, to State) AttemptChange {
	switch {
	case to.Status == Sending && from.Status != Sending:
		return AttemptChange{Op: AttemptStarted, N: to.Attempts, Medium: to.Medium}
	case from.Status == Sending && to.Status != Sending:
		outcome, detail := outcomeOf(to)
		return AttemptChange{Op: AttemptFinished, N: from.Attempts, Outcome: outcome, Detail: detail}
	case uncertainEnd(k, from) && to.Status == Sent:
		return AttemptChange{Op: AttemptDelivered, N: from.Attempts, Outcome: OutcomeSent, Detail: DeliveredAfterAll}
	}
	return AttemptChange{}
}

// outcomeOf reads the outcome of an attempt off the state it left the
// send in.
func outcomeOf(st State) (Outcome, string) {
	switch {
	case st.Status == Sent:
		return OutcomeSent, ""
	case st.Status == Scheduled:
		return OutcomeTransient, st.LastError
	case st.Reason == DeliveryUncertain:
		return OutcomeUncertain, st.LastError
	case st.Reason == Rejected:
		return OutcomeRejected, st.LastError
	}
	switch {
	case st.Reason == "":
		return OutcomeFailed, st.LastError
	case st.LastError == "":
		return OutcomeFailed, string(st.Reason)
	}
	return OutcomeFailed, string(st.Reason) + ": " + st.LastError
}
