package store

import (
	"context"
	"time"
)

// EventAccount returns the account of an event, for the ops CLI, which
// works across accounts and then acts with the event's own account.
func (s *Store) EventAccount(ctx context.Context, id string) (string, error) {
	var acc string
	err := s.db.GetContext(ctx, &acc, `SELECT account_id FROM events WHERE id = $1`, id)
	return acc, translate(err)
}

// FailedInvite is an event whose invite failed.
type FailedInvite struct {
	EventID   string    `db:"id"`
	AccountID string    `db:"account_id"`
	Reason    string    `db:"invite_reason"`
	FailedAt  time.Time `db:"updated_at"`
}

// FailedFilter selects failed invites for a bulk retry.
type FailedFilter struct {
	Since       time.Time // failed at or after
	AccountID   string    // optional
	EventTypeID string    // optional
	AfterID     string    // keyset: event ids greater than this
	Limit       int
}

// FailedInvites lists failed invites in event id order, a page at a time,
// so a bulk retry can be interrupted and run again.
func (s *Store) FailedInvites(ctx context.Context, f FailedFilter) ([]FailedInvite, error) {
	var out []FailedInvite
	err := s.db.SelectContext(ctx, &out, `
		SELECT id, account_id, COALESCE(invite_reason, '') AS invite_reason, updated_at FROM events
		WHERE invite_status = 'failed' AND updated_at >= $1
		  AND ($2 = '' OR account_id = $2) AND ($3 = '' OR event_type_id = $3) AND id > $4
		ORDER BY id LIMIT $5`, f.Since, f.AccountID, f.EventTypeID, f.AfterID, f.Limit)
	return out, translate(err)
}
