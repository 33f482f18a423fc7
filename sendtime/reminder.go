package sendtime

import "time"

// ReminderPlan is what an invite's reminder is scheduled from: the
// setting's reminder delay as it is now (not a copy taken at the accept,
// so a shop that turns reminders off stops the ones still waiting),
// counted from when the invite was sent, in the event's send window.
//
// sentAt is when the invite was sent, nil while it has not been; a
// reminder follows only an invite that was sent, so ok is false when
// sentAt is nil or the setting has no reminder delay ("").
func ReminderPlan(sentAt *time.Time, reminderDelay string, window *SendWindow) (p Plan, ok bool) {
	if sentAt == nil || reminderDelay == "" {
		return Plan{}, false
	}
	sent := sentAt.UTC()
	return Plan{ReceivedAt: sent, TransactionDate: sent, Delay: reminderDelay, DelayFrom: FromEvent,
		SendWindow: window}, true
}
