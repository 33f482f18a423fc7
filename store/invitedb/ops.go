package invitedb

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/pg"
)

// EventAccount returns the account of an event, for the ops CLI, which
// works across accounts and then acts with the event's own account.
func (s *Store) EventAccount(ctx context.Context, id string) (string, error) {
	var acc string
	err := s.db.GetContext(ctx, &acc, `SELECT account_id FROM events WHERE id = $1`, id)
	return acc, pg.Translate(err)
}

// FailedInvite is an event whose invite failed.
type FailedInvite struct {
	EventID     string        `db:"id"`
	AccountID   string        `db:"account_id"`
	EventTypeID string        `db:"event_type_id"`
	ChannelID   string        `db:"channel_id"`
	Reason      invite.Reason `db:"invite_reason"`
	LastError   string        `db:"last_error"`
	FailedAt    time.Time     `db:"updated_at"`
}

// FailedFilter selects failed invites for a bulk retry. Zero values do
// not filter, except that delivery_uncertain invites are left out unless
// IncludeUncertain is set: they may have been delivered, so sending them
// again is a decision to make on purpose.
type FailedFilter struct {
	Since       time.Time       // failed at or after
	Until       time.Time       // failed before; zero: no bound
	AccountID   string          // acc-…
	EventTypeID string          // ety-…
	ChannelID   string          // chl-…
	Reasons     []invite.Reason // any of these reasons
	// IncludeUncertain admits invites failed as delivery_uncertain.
	IncludeUncertain bool
	AfterID          string // keyset: event ids greater than this
	Limit            int
}

// FailedInvites lists failed invites in event id order, a page at a time,
// so a bulk retry can be interrupted and run again. "Failed at" is the
// time of the invite's last change.
func (s *Store) FailedInvites(ctx context.Context, f FailedFilter) ([]FailedInvite, error) {
	var until *time.Time
	if !f.Until.IsZero() {
		until = &f.Until
	}
	reasons := make([]string, len(f.Reasons))
	for i, r := range f.Reasons {
		reasons[i] = string(r)
	}
	var out []FailedInvite
	err := s.db.SelectContext(ctx, &out, `
		SELECT id, account_id, event_type_id, channel_id, COALESCE(invite_reason, '') AS invite_reason,
		       COALESCE(last_error, '') AS last_error, updated_at
		FROM events
		WHERE invite_status = 'failed' AND updated_at >= $1 AND ($2::timestamptz IS NULL OR updated_at < $2)
		  AND ($3 = '' OR account_id = $3) AND ($4 = '' OR event_type_id = $4) AND ($5 = '' OR channel_id = $5)
		  AND (cardinality($6::text[]) = 0 OR invite_reason = ANY($6))
		  AND ($7 OR invite_reason IS DISTINCT FROM 'delivery_uncertain')
		  AND id > $8
		ORDER BY id LIMIT $9`,
		f.Since, until, f.AccountID, f.EventTypeID, f.ChannelID, pq.Array(reasons), f.IncludeUncertain, f.AfterID, f.Limit)
	return out, pg.Translate(err)
}
