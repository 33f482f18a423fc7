package invitedb_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/invitedb"
)

// The reconciler's candidates: invites that should have moved by the
// cutoff, except a pending one whose start order is still open.
func TestStuckCandidates(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	now := time.Now().UTC().Truncate(time.Millisecond)
	event := func(status invite.Status, changed time.Time, scheduledFor *time.Time, outbox string) string {
		t.Helper()
		id := a.Event(t, eventfixture.Event{Status: status})
		_, err := st.DB().Exec(`UPDATE events SET updated_at = $2, scheduled_for = $3 WHERE id = $1`, id, changed, scheduledFor)
		require.NoError(t, err)
		switch outbox {
		case "open":
			_, err = st.DB().Exec(`INSERT INTO outbox (event_id, created_at, next_attempt_at) VALUES ($1, $2, $2)`, id, changed)
		case "done":
			_, err = st.DB().Exec(`INSERT INTO outbox (event_id, created_at, next_attempt_at, done_at) VALUES ($1, $2, $2, $2)`, id, changed)
		}
		require.NoError(t, err)
		return id
	}
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	hourAgo := now.Add(-time.Hour)

	overdue := event(invite.Scheduled, hourAgo, at(-time.Hour), "done")
	event(invite.Scheduled, hourAgo, at(time.Hour), "done")    // not due yet
	event(invite.Scheduled, hourAgo, at(-time.Minute), "done") // due within the grace
	startedLong := event(invite.Pending, hourAgo, nil, "done") // started, yet still pending
	neverStarted := event(invite.Pending, hourAgo, nil, "")    // no start order at all
	event(invite.Pending, hourAgo, nil, "open")                // the starter's to start
	event(invite.Pending, now, nil, "done")                    // just accepted
	sending := event(invite.Sending, hourAgo, at(-time.Hour), "done")
	event(invite.Sending, now, at(-time.Hour), "done") // being sent right now
	event(invite.Sent, hourAgo, at(-time.Hour), "done")
	event(invite.Failed, hourAgo, at(-time.Hour), "done")

	cutoff := now.Add(-10 * time.Minute)
	got := map[string]invite.Status{}
	var cur invitedb.StuckCursor
	for pages := 0; !cur.Done(); pages++ {
		require.Less(t, pages, 20, "the scan ends")
		page, next, err := st.Invites.StuckCandidates(ctx, cutoff, cur, 1)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(page), 1)
		for _, c := range page {
			assert.NotContains(t, got, c.EventID, "each candidate once")
			got[c.EventID] = c.Status
			assert.True(t, c.Since.Before(cutoff), "%s: should have moved before the cutoff", c.EventID)
		}
		cur = next
	}
	assert.Equal(t, map[string]invite.Status{
		overdue: invite.Scheduled, startedLong: invite.Pending, neverStarted: invite.Pending, sending: invite.Sending,
	}, got)
}

// A restart goes back to pending with a restart order in one
// transaction, only from the status the reconciler saw and only without
// another open start order.
func TestRestartInvite(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
	openOrders := func(id string) []string {
		var kinds []string
		require.NoError(t, st.DB().Select(&kinds, `SELECT kind FROM outbox WHERE event_id = $1 AND done_at IS NULL`, id))
		return kinds
	}

	ok, err := st.Invites.RestartInvite(ctx, id, invite.Scheduled)
	require.NoError(t, err)
	assert.True(t, ok)
	state, err := st.Invites.LoadInviteState(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, invite.Pending, state.Status)
	assert.Equal(t, []string{string(invite.RunRestart)}, openOrders(id))

	ok, err = st.Invites.RestartInvite(ctx, id, invite.Scheduled)
	require.NoError(t, err)
	assert.False(t, ok, "the invite moved since it was seen")
	ok, err = st.Invites.RestartInvite(ctx, id, invite.Pending)
	require.NoError(t, err)
	assert.False(t, ok, "a start order is open")
	assert.Len(t, openOrders(id), 1)

	sent := a.Event(t, eventfixture.Event{Status: invite.Sent})
	ok, err = st.Invites.RestartInvite(ctx, sent, invite.Scheduled)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Empty(t, openOrders(sent))
	_, err = st.Invites.RestartInvite(ctx, sent, invite.Sent)
	assert.Error(t, err, "only pending and scheduled invites restart")

	// The starter sees the order with its kind.
	b, err := st.Events.ClaimOutbox(ctx, 10)
	require.NoError(t, err)
	require.Len(t, b.Orders, 1)
	assert.Equal(t, invite.RunRestart, b.Orders[0].Kind)
	assert.Equal(t, invite.Pending, b.Orders[0].InviteStatus)
	require.NoError(t, b.Release())
}

// The reminders among the candidates: a sent invite's reminder scheduled
// before the cutoff, or left sending since before it. Their restart keeps
// the reminder scheduled, at its time, with a restart order, once.
func TestStuckReminders(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	now := time.Now().UTC().Truncate(time.Millisecond)
	hourAgo := now.Add(-time.Hour)
	reminder := func(status invite.Status, changed, scheduledFor time.Time) string {
		t.Helper()
		id := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: hourAgo.Add(-time.Hour)})
		_, err := st.DB().Exec(`UPDATE events SET reminder_status = NULLIF($2, ''), reminder_scheduled_for = $3, updated_at = $4 WHERE id = $1`,
			id, status, scheduledFor, changed)
		require.NoError(t, err)
		return id
	}
	overdue := reminder(invite.Scheduled, hourAgo, hourAgo)
	reminder(invite.Scheduled, hourAgo, now.Add(time.Hour))          // not due yet
	reminder(invite.Scheduled, hourAgo, now.Add(-time.Minute))       // due within the grace
	sending := reminder(invite.Sending, hourAgo, hourAgo)            // interrupted
	reminder(invite.Sending, now, hourAgo)                           // being sent right now
	reminder(invite.Sent, hourAgo, hourAgo)                          // done
	reminder("", hourAgo, hourAgo)                                   // none planned
	invited := a.Event(t, eventfixture.Event{Status: invite.Failed}) // a reminder only follows a sent invite
	_, err := st.DB().Exec(`UPDATE events SET updated_at = $2 WHERE id = $1`, invited, hourAgo)
	require.NoError(t, err)

	cutoff := now.Add(-10 * time.Minute)
	got := map[string]invitedb.StuckCandidate{}
	var cur invitedb.StuckCursor
	for pages := 0; !cur.Done(); pages++ {
		require.Less(t, pages, 30, "the scan ends")
		page, next, err := st.Invites.StuckCandidates(ctx, cutoff, cur, 1)
		require.NoError(t, err)
		for _, c := range page {
			assert.NotContains(t, got, c.EventID, "each candidate once")
			got[c.EventID] = c
		}
		cur = next
	}
	require.Len(t, got, 2)
	assert.Equal(t, invitedb.StuckCandidate{EventID: overdue, Kind: invite.KindReminder, Status: invite.Scheduled, Since: got[overdue].Since}, got[overdue])
	assert.True(t, hourAgo.Equal(got[overdue].Since), "since its time")
	assert.Equal(t, invite.KindReminder, got[sending].Kind)
	assert.Equal(t, invite.Sending, got[sending].Status)

	openOrders := func(id string) []string {
		var kinds []string
		require.NoError(t, st.DB().Select(&kinds, `SELECT kind FROM outbox WHERE event_id = $1 AND done_at IS NULL`, id))
		return kinds
	}
	ok, err := st.Invites.RestartReminder(ctx, overdue)
	require.NoError(t, err)
	assert.True(t, ok)
	rem, err := st.Invites.LoadReminder(ctx, overdue)
	require.NoError(t, err)
	assert.Equal(t, invite.Scheduled, rem.Status)
	assert.True(t, hourAgo.Equal(*rem.ScheduledFor), "the reminder keeps its time")
	assert.Equal(t, []string{string(invite.RunRestart)}, openOrders(overdue))
	ok, err = st.Invites.RestartReminder(ctx, overdue)
	require.NoError(t, err)
	assert.False(t, ok, "a start order is open")
	assert.Len(t, openOrders(overdue), 1)

	ok, err = st.Invites.RestartReminder(ctx, sending)
	require.NoError(t, err)
	assert.False(t, ok, "a reminder left sending is never restarted")
	assert.Empty(t, openOrders(sending))
	ok, err = st.Invites.AbandonSend(ctx, invite.KindReminder, sending, "its workflow is missing")
	require.NoError(t, err)
	assert.True(t, ok)
	rem, err = st.Invites.LoadReminder(ctx, sending)
	require.NoError(t, err)
	assert.Equal(t, "skipped/delivery_uncertain", string(rem.Status)+"/"+string(rem.Reason))
	inv, err := st.Invites.LoadInviteState(ctx, sending)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, inv.Status, "the invite stays sent")

	// The starter sees the order with the reminder's status.
	b, err := st.Events.ClaimOutbox(ctx, 10)
	require.NoError(t, err)
	require.Len(t, b.Orders, 1)
	assert.Equal(t, invite.RunRestart, b.Orders[0].Kind)
	assert.Equal(t, invite.Sent, b.Orders[0].InviteStatus)
	assert.Equal(t, invite.Scheduled, b.Orders[0].ReminderStatus)
	require.NoError(t, b.Release())
}
