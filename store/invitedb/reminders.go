package invitedb

import (
	"context"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/pg"
)

// The reminder of an invite is the second kind of send of an event
// (invite.KindReminder), kept in the event row beside the invite's:
// planned once the invite is sent, then sent at most once, skipped or
// cancelled. Its steps are the invite's (sends.go).

const reminderColumns = `COALESCE(reminder_status, '') AS reminder_status, COALESCE(reminder_reason, '') AS reminder_reason,
	reminder_scheduled_for, reminder_sent_at`

// LoadReminder returns the reminder state of an event.
func (s *Store) LoadReminder(ctx context.Context, eventID string) (invite.Reminder, error) {
	var r invite.Reminder
	err := s.db.GetContext(ctx, &r, `SELECT `+reminderColumns+` FROM events WHERE id = $1`, eventID)
	return r, pg.Translate(err)
}
