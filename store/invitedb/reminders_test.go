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
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

func TestReminderLifecycle(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	sentAt := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	sent := func() string { return a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: sentAt}) }

	// No reminder configured: nothing to plan.
	id := sent()
	p, err := st.Invites.LoadPlan(ctx, invite.KindReminder, id)
	require.NoError(t, err)
	assert.Empty(t, p.Plan.Delay)

	a.Set(t, "reminder_delay", "P3D")
	p, err = st.Invites.LoadPlan(ctx, invite.KindReminder, id)
	require.NoError(t, err)
	assert.Equal(t, "P3D", p.Plan.Delay)
	assert.Equal(t, sentAt, p.Plan.ReceivedAt, "counted from the sending")
	pending, err := st.Invites.LoadPlan(ctx, invite.KindReminder, a.Event(t, eventfixture.Event{Status: invite.Scheduled}))
	require.NoError(t, err)
	assert.Empty(t, pending.Plan.Delay, "only a sent invite gets a reminder")

	at := sentAt.Add(72 * time.Hour)
	rem, err := st.Invites.MarkScheduled(ctx, invite.KindReminder, id, at)
	require.NoError(t, err)
	assert.Equal(t, invite.Reminder{Status: invite.Scheduled, ScheduledFor: &at}, rem.Reminder())

	// The claim: a review first skips it.
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: id, Rating: 5, Comment: "", Locale: "en"})
	require.NoError(t, err)
	c, err := st.Invites.ClaimSend(ctx, invite.KindReminder, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	assert.False(t, c.Send)
	assert.Equal(t, invite.Skipped, c.State.Status)
	assert.Equal(t, invite.Reviewed, c.State.Reason)

	// A suppressed address skips it; the throttle does not apply.
	id = sent()
	_, err = st.Invites.MarkScheduled(ctx, invite.KindReminder, id, at)
	require.NoError(t, err)
	c, err = st.Invites.ClaimSend(ctx, invite.KindReminder, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send, "minDaysBetweenInvites does not block a reminder")
	assert.Equal(t, "jane.doe@example.com", c.Address)
	c, err = st.Invites.ClaimSend(ctx, invite.KindReminder, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	assert.False(t, c.Send, "a claim that finds the mark of a crashed send does not send again")
	assert.Equal(t, invite.DeliveryUncertain, c.State.Reason)
	rem, err = st.Invites.FinishSend(ctx, invite.KindReminder, id, invite.SendResult{SentAt: at})
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, rem.Status, "a delivery wins over delivery_uncertain")

	id = sent()
	_, err = st.Invites.MarkScheduled(ctx, invite.KindReminder, id, at)
	require.NoError(t, err)
	_, _, err = st.Suppressions.AddSuppression(ctx, a.AccountID, "jane.doe@example.com", invite.Email, invite.Unsubscribed, "")
	require.NoError(t, err)
	c, err = st.Invites.ClaimSend(ctx, invite.KindReminder, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	assert.Equal(t, invite.Suppressed, c.State.Reason)
}

func TestCancelStopsAPendingReminder(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	id := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: time.Now()})

	_, err := st.Invites.CancelInvite(ctx, a.AccountID, id)
	assert.ErrorIs(t, err, invitedb.ErrInviteState, "a sent invite without a reminder cannot be cancelled")

	_, err = st.Invites.MarkScheduled(ctx, invite.KindReminder, id, time.Now().Add(time.Hour))
	require.NoError(t, err)
	e, err := st.Invites.CancelInvite(ctx, a.AccountID, id)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, e.InviteStatus, "the invite stays sent")
	assert.Equal(t, "cancelled", e.ReminderStatus.String)
	_, err = st.Invites.CancelInvite(ctx, a.AccountID, id)
	assert.NoError(t, err, "cancelling again is fine")

	c, err := st.Invites.ClaimSend(ctx, invite.KindReminder, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	assert.False(t, c.Send, "a cancelled reminder is never sent")
	rem, err := st.Invites.MarkScheduled(ctx, invite.KindReminder, id, time.Now())
	require.NoError(t, err)
	assert.Equal(t, invite.Cancelled, rem.Status, "a late plan does not revive it")
}
