package sms

import (
	"errors"
	"net/url"
)

// Touchpoint asks for each message's status updates at its status
// callback URL with the event and the kind of message in the query
// (?event=evt-…&message=invite), so that a report says what it is about
// without a record of the message's SID: nothing has to be written
// between the provider's acceptance and the invite's own record, and a
// message whose answer was lost still reports to its event. The provider
// signs the URL with its query, so the query can be trusted once
// ValidateSignature passes.
const (
	ParamEvent   = "event"
	ParamMessage = "message"

	MessageInvite   = "invite"
	MessageReminder = "reminder"
)

// StatusCallbackFor is base (an absolute http(s) URL, which may have a
// query of its own) with the event and the kind of message added.
func StatusCallbackFor(base, eventID string, reminder bool) (string, error) {
	if err := checkCallbackURL(base); err != nil {
		return "", err
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set(ParamEvent, eventID)
	q.Set(ParamMessage, MessageInvite)
	if reminder {
		q.Set(ParamMessage, MessageReminder)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// CallbackSubject reads what StatusCallbackFor put in a callback's query:
// the event ("" when the URL names none, e.g. a message sent with the
// configured URL alone) and whether the message was the reminder.
func CallbackSubject(query url.Values) (eventID string, reminder bool, err error) {
	switch m := query.Get(ParamMessage); m {
	case "", MessageInvite:
	case MessageReminder:
		reminder = true
	default:
		return "", false, errors.New("status callback: unknown message kind")
	}
	return query.Get(ParamEvent), reminder, nil
}
