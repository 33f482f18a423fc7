package sms

// CodeRegionNotPermitted (21408): the account may not send to the
// number's country. The fault is the account's geographic permissions,
// not the number: once they are fixed the same number is reached, so a
// send refused with it is Permanent but senderr.RecipientNotAtFault, and
// no reason to suppress the number.
const CodeRegionNotPermitted = 21408

// OptedOut reports whether a status update says the recipient had opted
// out (error 21610): a messaging service accepts the message first and
// reports the refusal here, where a plain sender refuses at Send.
func (s Status) OptedOut() bool {
	return failedDelivery(s.Status) && s.ErrorCode == codeUnsubscribed
}

// NumberRefused reports whether a status update says the number itself
// can never be reached: a code that makes a Send error
// senderr.RecipientRefused (a messaging service reports those here), or
// the carrier's unknown handset (30005) or landline (30006). Other undelivered messages — a phone switched off
// (30003), a carrier's filter (30007) — say nothing lasting about the
// number.
func (s Status) NumberRefused() bool {
	if !failedDelivery(s.Status) {
		return false
	}
	switch s.ErrorCode {
	case 30005, // unknown destination handset
		30006: // landline or unreachable carrier
		return true
	}
	return refusesNumber(s.ErrorCode)
}

func failedDelivery(status string) bool {
	return status == StatusUndelivered || status == StatusFailed
}
