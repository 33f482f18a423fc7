package invitedb_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
)

// attemptOf is the part of an attempt a test compares: everything but the
// times, which are checked on their own.
type attemptOf struct {
	N       int
	Kind    invite.Kind
	Outcome invite.Outcome
	Detail  string
}

func attemptsOf(t *testing.T, st *store.Store, id string) ([]attemptOf, []invitedb.Attempt) {
	t.Helper()
	all, err := st.Invites.EventAttempts(context.Background(), id)
	require.NoError(t, err)
	out := make([]attemptOf, len(all))
	for i, a := range all {
		out[i] = attemptOf{a.N, a.Kind, a.Outcome, a.Detail}
	}
	return out, all
}

// Every attempt is kept, in the transactions of the claim and of the
// outcome, across a retry of the invite.
func TestSendAttemptsKeptAcrossRetries(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	id := a.Event(t, eventfixture.Event{})
	clock := time.Date(2026, 5, 8, 10, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return clock })
	tick := func() { clock = clock.Add(time.Second) }

	_, err := st.Invites.MarkScheduled(ctx, invite.KindInvite, id, clock)
	require.NoError(t, err)
	claim := func() {
		t.Helper()
		tick()
		claimSend(t, st, id)
	}
	finish := func(o invite.SendResult) {
		t.Helper()
		tick()
		_, err := st.Invites.FinishSend(ctx, invite.KindInvite, id, o)
		require.NoError(t, err)
	}

	claim()
	got, all := attemptsOf(t, st, id)
	assert.Equal(t, []attemptOf{{1, invite.KindInvite, "", ""}}, got, "an attempt is recorded as it starts")
	assert.Nil(t, all[0].FinishedAt)
	assert.Equal(t, "email", all[0].Medium)

	finish(invite.SendResult{Retry: true, Error: "451 4.7.1 try again later"})
	claim()
	finish(invite.SendResult{Reason: invite.Rejected, Error: "550 5.1.1 <j***@example.com>: no such user"})

	// A retry keeps the history and adds to it.
	_, err = st.Invites.RetryInvite(ctx, a.AccountID, id)
	require.NoError(t, err)
	_, err = st.Invites.MarkScheduled(ctx, invite.KindInvite, id, clock)
	require.NoError(t, err)
	claim()
	finish(invite.SendResult{SentAt: clock})

	got, all = attemptsOf(t, st, id)
	assert.Equal(t, []attemptOf{
		{1, invite.KindInvite, invite.OutcomeTransient, "451 4.7.1 try again later"},
		{2, invite.KindInvite, invite.OutcomeRejected, "550 5.1.1 <j***@example.com>: no such user"},
		{3, invite.KindInvite, invite.OutcomeSent, ""},
	}, got)
	for i, a := range all {
		require.NotNil(t, a.FinishedAt, "attempt %d", a.N)
		assert.Equal(t, a.StartedAt.Add(time.Second), *a.FinishedAt, "attempt %d took one tick", a.N)
		if i > 0 {
			assert.True(t, a.StartedAt.After(all[i-1].StartedAt), "oldest first")
		}
	}
	e, err := st.Invites.Event(ctx, a.AccountID, id)
	require.NoError(t, err)
	assert.Equal(t, 3, e.Attempts, "the count and the history agree")
	h, err := e.History()
	require.NoError(t, err)
	assert.Equal(t, all, h, "the stored event carries the same history")
}

// An attempt cut off by a crash is finished by whoever finds it: the next
// claim, the workflow giving up, or the reconciler. A delivery recorded
// after all turns it sent.
func TestInterruptedAttempts(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})

	sending := func() string {
		t.Helper()
		id := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
		claimSend(t, st, id)
		return id
	}
	for name, giveUp := range map[string]func(id string) error{
		"next claim": func(id string) error {
			c, err := st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{})
			assert.False(t, c.Send)
			return err
		},
		"workflow": func(id string) error {
			_, err := st.Invites.GiveUp(ctx, invite.KindInvite, id, invite.RetriesExhausted, "send attempt timed out")
			return err
		},
		"reconciler": func(id string) error {
			changed, err := st.Invites.AbandonSend(ctx, invite.KindInvite, id, "its workflow is gone")
			assert.True(t, changed)
			return err
		},
	} {
		id := sending()
		require.NoError(t, giveUp(id), name)
		got, all := attemptsOf(t, st, id)
		require.Len(t, got, 1, name)
		assert.Equal(t, invite.OutcomeUncertain, got[0].Outcome, name)
		assert.Contains(t, got[0].Detail, "may have been delivered", name)
		assert.NotNil(t, all[0].FinishedAt, name)
		state, err := st.Invites.LoadInviteState(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, invite.DeliveryUncertain, state.Reason, name)
	}

	id := sending()
	_, err := st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	_, err = st.Invites.FinishSend(ctx, invite.KindInvite, id, invite.SendResult{SentAt: time.Now()})
	require.NoError(t, err)
	got, _ := attemptsOf(t, st, id)
	assert.Equal(t, []attemptOf{{1, invite.KindInvite, invite.OutcomeSent, "delivered; recorded after the attempt had been judged uncertain"}}, got)

	// AbandonSend leaves an invite that is not sending alone.
	changed, err := st.Invites.AbandonSend(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{Status: invite.Scheduled}), "")
	require.NoError(t, err)
	assert.False(t, changed)
}

// The reminder's attempts are kept beside the invite's, numbered on their
// own, with the same outcomes and details.
func TestReminderAttempts(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
	claimSend(t, st, id)
	_, err := st.Invites.FinishSend(ctx, invite.KindInvite, id, invite.SendResult{SentAt: time.Now()})
	require.NoError(t, err)

	_, err = st.Invites.MarkScheduled(ctx, invite.KindReminder, id, time.Now())
	require.NoError(t, err)
	rc, err := st.Invites.ClaimSend(ctx, invite.KindReminder, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, rc.Send)
	_, err = st.Invites.FinishSend(ctx, invite.KindReminder, id, invite.SendResult{Retry: true, Error: "421 busy"})
	require.NoError(t, err)
	rc, err = st.Invites.ClaimSend(ctx, invite.KindReminder, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, rc.Send)
	// Crashed mid-send: the next claim skips it as delivery_uncertain.
	rc, err = st.Invites.ClaimSend(ctx, invite.KindReminder, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.False(t, rc.Send)

	got, all := attemptsOf(t, st, id)
	require.Len(t, got, 3)
	assert.Equal(t, attemptOf{1, invite.KindInvite, invite.OutcomeSent, ""}, got[0])
	assert.Equal(t, attemptOf{1, invite.KindReminder, invite.OutcomeTransient, "421 busy"}, got[1],
		"a reminder's attempt keeps the provider's answer, as an invite's does")
	assert.Equal(t, 2, got[2].N)
	assert.Equal(t, invite.KindReminder, got[2].Kind)
	assert.Equal(t, invite.OutcomeUncertain, got[2].Outcome)
	assert.Equal(t, "email", all[1].Medium)
}
