package invitedb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/pg"
)

// The reconciler's side of the database: the sends — invites, and the
// reminders of sent invites — that should have moved by now (a candidate
// whose workflow Temporal still runs is only late, one whose workflow is
// gone or closed is stuck) and the two repairs: a new run ordered through
// the outbox, or, for a send that was interrupted, the verdict
// delivery_uncertain.

// StuckCandidate is a send that should have moved by now: an invite, or
// the reminder of a sent invite.
type StuckCandidate struct {
	EventID string        `db:"id"`
	Kind    invite.Kind   `db:"kind"`
	Status  invite.Status `db:"status"` // the send's, of its kind
	// Since is when it should have moved: the send time of a scheduled
	// send, the last change of a pending or sending one.
	Since time.Time `db:"since"`
}

// StuckCursor is where a scan of candidates goes on: a phase (0: overdue
// scheduled invites, 1: stalled pending and sending ones, 2: overdue
// scheduled reminders, 3: stalled sending ones, 4: done) and a keyset
// position within it. The zero value starts a scan.
type StuckCursor struct {
	Phase int       `json:"phase"`
	Since time.Time `json:"since"`
	ID    string    `json:"id"`
}

// stuckPhases is the number of phases of a scan.
const stuckPhases = 4

// Done reports whether the scan is complete.
func (c StuckCursor) Done() bool { return c.Phase >= stuckPhases }

// stuckPhase is the query of one phase of the scan, each served by its
// partial index (schema 0009 and 0022): scheduled invites past their send
// time, then pending invites without an open start order and sending
// invites, unchanged for a while; then the same of reminders, which are
// planned only for a sent invite and never pending. A pending invite
// with an open start order is the starter's.
func stuckPhase(phase int) string {
	switch phase {
	case 0:
		return `SELECT id, 'invite' AS kind, invite_status AS status, scheduled_for AS since FROM events
		 WHERE invite_status = 'scheduled' AND scheduled_for < $1 AND (scheduled_for, id) > ($2, $3)
		 ORDER BY scheduled_for, id LIMIT $4`
	case 1:
		return `SELECT id, 'invite' AS kind, invite_status AS status, updated_at AS since FROM events e
		 WHERE invite_status IN ('pending', 'sending') AND updated_at < $1 AND (updated_at, id) > ($2, $3)
		   AND NOT (invite_status = 'pending' AND EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = e.id AND o.done_at IS NULL))
		 ORDER BY updated_at, id LIMIT $4`
	case 2:
		return `SELECT id, 'reminder' AS kind, reminder_status AS status, reminder_scheduled_for AS since FROM events
		 WHERE reminder_status = 'scheduled' AND reminder_scheduled_for < $1 AND (reminder_scheduled_for, id) > ($2, $3)
		 ORDER BY reminder_scheduled_for, id LIMIT $4`
	}
	return `SELECT id, 'reminder' AS kind, reminder_status AS status, updated_at AS since FROM events
	 WHERE reminder_status = 'sending' AND updated_at < $1 AND (updated_at, id) > ($2, $3)
	 ORDER BY updated_at, id LIMIT $4`
}

// StuckCandidates returns up to limit sends that should have moved
// before cutoff, from cur on, and the cursor of the next page; an empty
// page with a Done cursor ends the scan.
func (s *Store) StuckCandidates(ctx context.Context, cutoff time.Time, cur StuckCursor, limit int) ([]StuckCandidate, StuckCursor, error) {
	for !cur.Done() {
		var page []StuckCandidate
		after := cur.Since
		if after.IsZero() {
			after = time.Unix(0, 0)
		}
		if err := s.db.SelectContext(ctx, &page, stuckPhase(cur.Phase), cutoff, after, cur.ID, limit); err != nil {
			return nil, cur, fmt.Errorf("stuck sends: %w", pg.Translate(err))
		}
		if len(page) == 0 {
			cur = StuckCursor{Phase: cur.Phase + 1}
			continue
		}
		last := page[len(page)-1]
		return page, StuckCursor{Phase: cur.Phase, Since: last.Since, ID: last.EventID}, nil
	}
	return nil, cur, nil
}

// RestartInvite orders a new workflow run of an invite whose run is gone
// or closed (invite.Restart): the invite, still in the status seen
// (pending or scheduled) and without an open start order, goes back to
// pending and a restart order is written in the same transaction. It
// reports whether it did; an invite that moved meanwhile is left alone.
func (s *Store) RestartInvite(ctx context.Context, eventID string, seen invite.Status) (bool, error) {
	if seen != invite.Pending && seen != invite.Scheduled {
		return false, fmt.Errorf("restart invite %s: status %s cannot be restarted", eventID, seen)
	}
	c, err := s.change(ctx, invite.KindInvite, eventID, func(tx *sqlx.Tx, cur sendState) (invite.Change, error) {
		var open bool
		if err := tx.GetContext(ctx, &open, `SELECT EXISTS (SELECT 1 FROM outbox WHERE event_id = $1 AND done_at IS NULL)`, eventID); err != nil {
			return invite.Change{}, err
		}
		return invite.Restart(cur.State, seen, open)
	})
	if errors.Is(err, invite.ErrRefused) {
		return false, nil
	}
	return err == nil && c.Changed(), err
}

// RestartReminder orders a new workflow run for the reminder of a sent
// invite whose run is gone or closed while the reminder waited
// (invite.RestartReminder): the reminder stays scheduled, keeping its
// time, and a restart order is written in the same transaction; the new
// run finds the invite sent and goes on with the reminder. It reports
// whether it did; a reminder that moved meanwhile, or one with an open
// start order, is left alone.
func (s *Store) RestartReminder(ctx context.Context, eventID string) (bool, error) {
	c, err := s.change(ctx, invite.KindReminder, eventID, func(tx *sqlx.Tx, cur sendState) (invite.Change, error) {
		var open bool
		if err := tx.GetContext(ctx, &open, `SELECT EXISTS (SELECT 1 FROM outbox WHERE event_id = $1 AND done_at IS NULL)`, eventID); err != nil {
			return invite.Change{}, err
		}
		return invite.RestartReminder(cur.State, cur.InviteStatus, open)
	})
	if errors.Is(err, invite.ErrRefused) {
		return false, nil
	}
	return err == nil && c.Changed(), err
}

// AbandonSend gives up on a send of kind k whose workflow is gone or
// closed while it was marked sending (invite.Abandon): it may have been
// delivered, so it ends as delivery_uncertain — an invite fails, a
// reminder is skipped — and is never sent again by itself (ops may retry
// a failed invite on purpose). Only a send still sending changes; it
// reports whether it did.
func (s *Store) AbandonSend(ctx context.Context, k invite.Kind, eventID, why string) (bool, error) {
	c, err := s.change(ctx, k, eventID, func(_ *sqlx.Tx, cur sendState) (invite.Change, error) {
		return invite.Abandon(k, cur.State, why)
	})
	if errors.Is(err, invite.ErrRefused) {
		return false, nil
	}
	return err == nil && c.Changed(), err
}
