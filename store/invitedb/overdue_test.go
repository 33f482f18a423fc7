package invitedb_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/storeset"
)

// TestOverdueInvites: only invites still scheduled more than the grace
// past their send time count — not those due soon or just due, and not
// those that ended or are being sent.
func TestOverdueInvites(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := storeset.New(db, "PT0S")
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return now })
	acc := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	ctx := context.Background()

	n, err := st.Invites.OverdueInvites(ctx, 5*time.Minute)
	require.NoError(t, err)
	assert.Zero(t, n, "no events at all")

	for _, e := range []struct {
		status invite.Status
		due    time.Duration // scheduled_for relative to now
	}{
		{invite.Scheduled, -time.Hour},                   // overdue
		{invite.Scheduled, -5*time.Minute - time.Second}, // overdue, just
		{invite.Scheduled, -5 * time.Minute},             // exactly the grace: not yet
		{invite.Scheduled, -time.Minute},                 // due, a worker is on it
		{invite.Scheduled, time.Hour},                    // waiting for its time
		{invite.Sending, -time.Hour},                     // being sent
		{invite.Sent, -time.Hour},
		{invite.Failed, -time.Hour},
		{invite.Cancelled, -time.Hour},
		{invite.Pending, 0}, // no workflow yet: the outbox gauges watch it
	} {
		id := acc.Event(t, eventfixture.Event{Status: e.status})
		if e.due != 0 {
			_, err := db.Exec(`UPDATE events SET scheduled_for = $2 WHERE id = $1`, id, now.Add(e.due))
			require.NoError(t, err)
		}
	}
	n, err = st.Invites.OverdueInvites(ctx, 5*time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	n, err = st.Invites.OverdueInvites(ctx, 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, 4, n, "a shorter grace counts the ones just due too")
}

func TestOverdueInvitesReportsAnUnreachableDatabase(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := storeset.New(db, "PT0S")
	require.NoError(t, db.Close())
	_, err := st.Invites.OverdueInvites(context.Background(), 5*time.Minute)
	assert.Error(t, err)
}
