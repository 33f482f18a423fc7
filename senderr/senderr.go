// Package senderr is the one vocabulary of a failed send, whatever the
// medium: the mail senders (SMTP, the .eml directory) and the SMS
// provider adapter return an *Error, and the send step decides from it
// alone whether to try again, give up, or never send again (Kind), and
// what the failure says about the recipient (Recipient) — whether to put
// the address on the suppression list, and why.
//
// An Error's Text never carries the recipient's full address or number,
// nor a credential: it ends up in Temporal's history, in logs and in the
// attempt's detail that the API shows. Adapters mask what providers echo
// before they make one.
package senderr

import "errors"

// Kind tells what a failed send means for trying again.
type Kind int

const (
	// Transient: it may work later (a 4xx reply, a refused connection, a
	// timeout before the message went out, a provider's 429 or 5xx).
	Transient Kind = iota
	// Permanent: the provider refused the recipient or the message for
	// good; sending again meets the same refusal.
	Permanent
	// Uncertain: the message went out and no answer came back; it may
	// have been delivered, so sending again may duplicate it.
	Uncertain
)

func (k Kind) String() string {
	switch k {
	case Transient:
		return "transient"
	case Permanent:
		return "permanent"
	case Uncertain:
		return "uncertain"
	}
	return "unknown"
}

// Recipient is what a permanent failure says about the recipient.
type Recipient int

const (
	// RecipientNotAtFault: nothing lasting about the recipient — the
	// message, the sender or the sender's account was refused (a number
	// in a region the account may not send to), or the failure is not
	// permanent.
	RecipientNotAtFault Recipient = iota
	// RecipientRefused: the address or number itself is refused for good
	// (an unknown mailbox, an invalid or landline number): every message
	// to it would meet the same refusal.
	RecipientRefused
	// RecipientOptedOut: the recipient told the provider to stop sending
	// to them (an SMS STOP reply).
	RecipientOptedOut
)

// Error is a failed send.
type Error struct {
	Kind      Kind
	Recipient Recipient
	// Code is the provider's reply or error code (an SMTP reply code, an
	// SMS provider's error code); 0 if none.
	Code int
	// Text says what failed, safe to keep (see the package doc).
	Text string
	// Err is the underlying error, if any (a transport error); its text
	// is not part of Text unless the adapter put it there, masked.
	Err error
}

func (e *Error) Error() string { return e.Text }
func (e *Error) Unwrap() error { return e.Err }

// KindOf classifies any error of a send; one that is no *Error (a bug, a
// context cancelled while nothing went out) is Transient, as trying again
// can do no harm before a message went out.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Transient
}

// RecipientOf is what err says about the recipient; RecipientNotAtFault
// for any failure that is not Permanent.
func RecipientOf(err error) Recipient {
	var e *Error
	if errors.As(err, &e) && e.Kind == Permanent {
		return e.Recipient
	}
	return RecipientNotAtFault
}
