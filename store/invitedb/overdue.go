package invitedb

import (
	"context"
	"fmt"
	"time"

	"github.com/touchpoint/touchpoint/store/pg"
)

// OverdueInvites counts the invites still scheduled more than grace past
// their send time. No worker has sent them: the worker fleet is down or
// cannot reach Temporal — or, between its retries, the mail provider keeps
// failing (each such invite's last_error says so). The count reads a
// small partial index (schema 0008), not the events.
func (s *Store) OverdueInvites(ctx context.Context, grace time.Duration) (int, error) {
	var n int
	err := s.db.GetContext(ctx, &n,
		`SELECT count(*) FROM events WHERE invite_status = 'scheduled' AND scheduled_for < $1`, s.Now().Add(-grace))
	if err != nil {
		return 0, fmt.Errorf("overdue invites: %w", pg.Translate(err))
	}
	return n, nil
}
