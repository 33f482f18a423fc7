package invite

import "slices"

// MailOutcome is what a mail provider reported of a message after its
// relay took it: the message reached the mailbox (delivered), was refused
// for good (bounced), was marked as spam by the customer (complained),
// or was delayed or refused for now (deferred: the provider tries again,
// nothing changes but the attempt's record).
type MailOutcome string

// Mail outcomes, as the API, the database and the metrics spell them.
const (
	MailDelivered  MailOutcome = "delivered"
	MailBounced    MailOutcome = "bounced"
	MailComplained MailOutcome = "complained"
	MailDeferred   MailOutcome = "deferred"
)

// SMSReport is one report of an SMS provider's status callback on a
// message it took.
type SMSReport struct {
	MessageSID string
	// EventID is the event the message belongs to, as the callback URL
	// names it; "" when it does not, in which case only a message reported
	// on before is updated.
	EventID string
	// Reminder: the message carried the event's reminder, not its invite.
	Reminder  bool
	Status    string // the provider's MessageStatus: queued, sent, delivered, undelivered, failed, …
	ErrorCode int    // why it was undelivered or failed; 0 if none
	// Suppress, when set, puts the number on the suppression list of the
	// event's account with this reason: the report says the customer
	// opted out (unsubscribed) or the number can never be reached
	// (bounced).
	Suppress SuppressionReason
	// Number is the recipient in E.164 as the report names it; "" falls
	// back to the number the claim recorded.
	Number string
}

var mailOutcomes = []MailOutcome{MailDelivered, MailBounced, MailComplained, MailDeferred}

// MailOutcomes lists every mail outcome.
func MailOutcomes() []MailOutcome { return slices.Clone(mailOutcomes) }

// Valid reports whether o is a known mail outcome.
func (o MailOutcome) Valid() bool { return slices.Contains(mailOutcomes, o) }

// rank orders the outcomes that make a message's delivery status: a
// report ranking no higher than the status kept changes nothing, so a
// "delivered" that arrives after a bounce or a complaint never clears it,
// and a repeated report is harmless. A complaint outranks a bounce: the
// customer saw the message and said so.
func (o MailOutcome) rank() int {
	switch o {
	case MailDelivered:
		return 1
	case MailBounced:
		return 2
	case MailComplained:
		return 3
	}
	return 0 // deferred and "" (no report yet)
}

// NextDelivery is the delivery status of a message, now cur ("" before
// any report), after a report of o: the status and whether it changed. A
// deferral never changes it.
func NextDelivery(cur, o MailOutcome) (MailOutcome, bool) {
	if o == MailDeferred || !o.Valid() || o.rank() <= cur.rank() {
		return cur, false
	}
	return o, true
}

// Suppression is the suppression reason a report of o puts the address
// under: bounced for a permanent bounce, complained for a complaint, ""
// for the others.
func (o MailOutcome) Suppression() SuppressionReason {
	switch o {
	case MailBounced:
		return Bounced
	case MailComplained:
		return Complained
	}
	return ""
}
