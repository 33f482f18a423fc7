package invite

import (
	"slices"
	"time"
)

// The rules of a send. Each is a pure function from the send's state (and
// the facts read) to a Change, or a refusal (ErrRefused) when the state
// does not allow it. The store locks the event's row, reads the state and
// the facts, calls the rule and applies the Change in one transaction, so
// every rule is ordered against every other and against the API's cancel.
//
// The kinds differ in a few places, each named here:
//   - a send that does not go out for good ends failed as an invite, but
//     skipped as a reminder (the invite was sent; nothing about it failed);
//   - an invite waits pending or scheduled, a reminder only scheduled, and
//     a reminder is planned only once, for a sent invite;
//   - minDaysBetweenInvites throttles invites, not reminders (a reminder
//     belongs to its invite);
//   - a review stops a reminder.

// givenUp is the status a send of kind k ends in when it is not delivered
// and will not be tried again.
func (k Kind) givenUp() Status {
	if k == KindReminder {
		return Skipped
	}
	return Failed
}

// waiting are the statuses in which a send of kind k has not begun.
func (k Kind) waiting() []Status {
	if k == KindReminder {
		return []Status{Scheduled}
	}
	return []Status{Pending, Scheduled}
}

// Throttled reports whether minDaysBetweenInvites applies to sends of
// kind k, so the claim needs ClaimFacts.RecentlyInvited.
func (k Kind) Throttled() bool { return k == KindInvite }

// StopsOnReview reports whether a review of the event stops a send of
// kind k, so the claim needs ClaimFacts.Reviewed.
func (k Kind) StopsOnReview() bool { return k == KindReminder }

// uncertainEnd reports whether st is the verdict on an interrupted send:
// given up as delivery_uncertain.
func uncertainEnd(k Kind, st State) bool {
	return st.Status == k.givenUp() && st.Reason == DeliveryUncertain
}

// uncertain is the last error of a send given up as delivery_uncertain,
// with the detail of why, if known.
func uncertain(detail string) string {
	const msg = "a send attempt was interrupted after it began; the invite may have been delivered, so it is not sent again"
	if detail == "" {
		return msg
	}
	return msg + ": " + detail
}

// Schedule records the time a send is due. An invite that is pending,
// failed (a retry run, a reset) or scheduled already becomes scheduled for
// at; a reminder is planned once, for an invite that was sent (inviteStatus).
func Schedule(k Kind, cur State, at time.Time, inviteStatus Status) (Change, error) {
	next := cur
	switch {
	case k == KindInvite && slices.Contains([]Status{Pending, Failed, Scheduled}, cur.Status):
		next.Status, next.Reason, next.ScheduledFor = Scheduled, "", &at
	case k == KindReminder && cur.Status == "" && inviteStatus == Sent:
		next = State{Status: Scheduled, ScheduledFor: &at, Attempts: cur.Attempts}
	default:
		return refuse(k, "schedule", cur)
	}
	return change(k, cur, next), nil
}

// Skip records that a send will not go out, and why: an invite found
// pending, scheduled or failed (a retry run whose setting went inactive),
// a reminder found scheduled.
func Skip(k Kind, cur State, reason Reason) (Change, error) {
	if !slices.Contains(k.waiting(), cur.Status) && !(k == KindInvite && cur.Status == Failed) {
		return refuse(k, "skip", cur)
	}
	next := cur
	next.Status, next.Reason = Skipped, reason
	return change(k, cur, next), nil
}

// Cancel cancels a send that has not begun. One that began is not
// cancelled: it may already be on its way.
func Cancel(k Kind, cur State) (Change, error) {
	if !slices.Contains(k.waiting(), cur.Status) {
		return refuse(k, "cancel", cur)
	}
	next := cur
	next.Status, next.Reason = Cancelled, ""
	return change(k, cur, next), nil
}

// CancelWaiting is the shop's cancel of an event (the API, the CLI): it
// cancels the invite while it waits, else the reminder of a sent invite
// while that waits. A cancel made already stays so (unchanged); anything
// else — a send under way, an invite sent without a waiting reminder,
// skipped, failed — is refused.
func CancelWaiting(inv, rem State) (Change, error) {
	switch {
	case slices.Contains(KindInvite.waiting(), inv.Status):
		return Cancel(KindInvite, inv)
	case inv.Status == Sent && slices.Contains(KindReminder.waiting(), rem.Status):
		return Cancel(KindReminder, rem)
	case inv.Status == Cancelled:
		return unchanged(KindInvite, inv), nil
	case inv.Status == Sent && rem.Status == Cancelled:
		return unchanged(KindReminder, rem), nil
	case inv.Status == Sent:
		return refuse(KindReminder, "cancel", rem)
	}
	return refuse(KindInvite, "cancel", inv)
}

// GiveUp ends a send that will not be tried again, with reason and
// lastError: an invite fails, a reminder is skipped. One left sending may
// have gone out: it ends as delivery_uncertain instead. A send that ended
// already is refused, so a verdict the send step recorded itself stands.
func GiveUp(k Kind, cur State, reason Reason, lastError string) (Change, error) {
	switch {
	case cur.Status == Sending:
		reason, lastError = DeliveryUncertain, uncertain(lastError)
	case !slices.Contains(k.waiting(), cur.Status):
		return refuse(k, "give up", cur)
	}
	next := cur
	next.Status, next.Reason, next.LastError = k.givenUp(), reason, lastError
	return change(k, cur, next), nil
}

// Abandon gives up on a send left sending whose workflow is gone or
// closed (the reconciler): it may have been delivered, so it ends as
// delivery_uncertain and is never sent again by itself. why says what was
// found. Any other state is refused.
func Abandon(k Kind, cur State, why string) (Change, error) {
	if cur.Status != Sending {
		return refuse(k, "abandon", cur)
	}
	return GiveUp(k, cur, DeliveryUncertain, why)
}

// Retry turns a failed invite back to pending, its reason and last error
// cleared, and orders a new run that sends it now. Anything else is
// refused. A retry never lifts a suppression: the new run's claim meets it.
func Retry(cur State) (Change, error) {
	if cur.Status != Failed {
		return refuse(KindInvite, "retry", cur)
	}
	next := cur
	next.Status, next.Reason, next.LastError = Pending, "", ""
	c := change(KindInvite, cur, next)
	c.Run = RunRetry
	return c, nil
}

// Restart orders a new run of an invite whose workflow is gone or closed
// (the reconciler): the invite, still in the status seen (pending or
// scheduled) and without an open order for a run (orderOpen), goes back
// to pending and keeps its schedule. Anything else is refused: it moved
// meanwhile, or a run is ordered already.
func Restart(cur State, seen Status, orderOpen bool) (Change, error) {
	if cur.Status != seen || !slices.Contains(KindInvite.waiting(), seen) || orderOpen {
		return refuse(KindInvite, "restart", cur)
	}
	next := cur
	next.Status, next.Reason = Pending, ""
	c := change(KindInvite, cur, next)
	c.Run = RunRestart
	return c, nil
}

// RestartReminder orders a new run for the reminder of a sent invite
// whose workflow is gone or closed while the reminder waited (the
// reconciler): the reminder stays scheduled, keeping its time, and the
// new run goes on with it. Anything else is refused: the invite is not
// sent, the reminder moved meanwhile, or a run is ordered already
// (orderOpen).
func RestartReminder(cur State, inviteStatus Status, orderOpen bool) (Change, error) {
	if inviteStatus != Sent || cur.Status != Scheduled || orderOpen {
		return refuse(KindReminder, "restart", cur)
	}
	c := change(KindReminder, cur, cur)
	c.Run = RunRestart
	return c, nil
}

// ClaimFacts are what a claim reads besides the send's state: the event,
// its setting and the recipient as they are now.
//
// The first group is read with the event. The rest are objections whose
// zero value objects to nothing, read only while the claim still sends,
// in the order of their cost: the suppression list and the throttle under
// the address's lock, then the daily quota, whose reading counts the send
// and so must come last. The store calls Claim after each read; a fact
// can stop a send, never start one.
type ClaimFacts struct {
	EventTypeActive bool
	SettingActive   bool
	Medium          Medium // the setting's
	// Address is where the send goes by Medium: the email address, or the
	// mobile number in E.164; "" when there is none, or no valid one.
	Address string
	// ProviderReady: a provider for Medium is configured (SMS may have
	// none).
	ProviderReady bool
	// Reviewed: the customer has reviewed the event (read for the kinds
	// that StopsOnReview).
	Reviewed bool

	// Suppressed: the address is on the account's suppression list.
	Suppressed bool
	// RecentlyInvited: another of the account's invites to the address
	// went out within minDaysBetweenInvites, or is going out (read for
	// the kinds that are Throttled).
	RecentlyInvited bool
	// OverQuota, when not "", says why the account's send quota refuses
	// the send.
	OverQuota string
}

// Claim is the record-before step of a send: it decides, with the facts
// read, whether a scheduled send goes out now. If so, the send is marked
// sending with one attempt more (Change.Sends) and an SMS's number is
// kept; otherwise it ends skipped — or, for want of a provider, given up —
// with the reason. A send found sending was left by an attempt that
// stopped mid-send: it may have gone out, so it ends as
// delivery_uncertain and is never sent twice. Any other state is refused.
func Claim(k Kind, cur State, f ClaimFacts) (Change, error) {
	switch cur.Status {
	case Scheduled:
	case Sending:
		return GiveUp(k, cur, DeliveryUncertain, "")
	default:
		return refuse(k, "claim", cur)
	}
	next := cur
	next.Medium = f.Medium
	end := func(status Status, reason Reason, lastError string) (Change, error) {
		next.Status, next.Reason = status, reason
		if lastError != "" {
			next.LastError = lastError
		}
		return change(k, cur, next), nil
	}
	switch {
	case k.StopsOnReview() && f.Reviewed:
		return end(Skipped, Reviewed, "")
	case !f.EventTypeActive:
		return end(Skipped, EventTypeInactive, "")
	case !f.SettingActive:
		return end(Skipped, SettingInactive, "")
	case f.Address == "":
		return end(Skipped, NoAddress, "")
	case !f.ProviderReady:
		return end(k.givenUp(), NoProvider, "no "+providerName(f.Medium)+" provider configured")
	case f.Suppressed:
		return end(Skipped, Suppressed, "")
	case k.Throttled() && f.RecentlyInvited:
		return end(Skipped, RecentlyInvited, "")
	case f.OverQuota != "":
		return end(Skipped, QuotaExceeded, f.OverQuota)
	}
	next.Status, next.Reason, next.Attempts = Sending, "", cur.Attempts+1
	c := change(k, cur, next)
	if f.Medium == SMS {
		c.Number = f.Address
	}
	return c, nil
}

func providerName(m Medium) string {
	if m == SMS {
		return "SMS"
	}
	return string(m)
}

// SendResult is how a claimed send ended, as the send step saw it.
type SendResult struct {
	SentAt time.Time // non-zero: delivered at this time
	Retry  bool      // a transient failure: back to scheduled, to be tried again
	Reason Reason    // otherwise: given up with this reason …
	Error  string    // … and this error (also the last error of a retry)
	// Suppress, when set, puts Address on the account's suppression list
	// with this reason (see Change.Suppress).
	Suppress SuppressionReason
	Address  string
}

// Finish records how a claimed send ended: sent, back to scheduled for
// another try, or given up (an invite fails, a reminder is skipped), the
// address suppressed when r asks for it. Only a send still sending
// changes — except that a delivery always wins over an earlier verdict of
// delivery_uncertain, as the record of a sent message must not be lost.
func Finish(k Kind, cur State, r SendResult) (Change, error) {
	next := cur
	switch {
	case !r.SentAt.IsZero() && (cur.Status == Sending || uncertainEnd(k, cur)):
		at := r.SentAt
		next.Status, next.Reason, next.SentAt = Sent, "", &at
		return change(k, cur, next), nil
	case cur.Status != Sending || !r.SentAt.IsZero():
		return refuse(k, "finish", cur)
	case r.Retry:
		next.Status, next.LastError = Scheduled, r.Error
		return change(k, cur, next), nil
	}
	next.Status, next.Reason, next.LastError = k.givenUp(), r.Reason, r.Error
	c := change(k, cur, next)
	if r.Suppress != "" && r.Address != "" {
		c.Suppress, c.Address = r.Suppress, r.Address
	}
	return c, nil
}
