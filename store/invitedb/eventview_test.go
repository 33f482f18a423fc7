package invitedb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/storeset"
)

func TestListEventsFiltersAndPages(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "PT10S")
	tn := eventfixture.NewTenant(t, st)
	other := eventfixture.NewTenant(t, st)
	ctx := context.Background()

	base := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 5 {
		st.SetClock(func() time.Time { return base.Add(time.Duration(i) * time.Minute) })
		e := tn.Event(fmt.Sprintf("c%d@example.com", i%2))
		e.TransactionReference = fmt.Sprintf("order-%d", i)
		acc, err := st.Events.AcceptEvent(ctx, e)
		require.NoError(t, err)
		ids = append([]string{acc.EventID}, ids...) // newest first
	}
	_, err := st.Events.AcceptEvent(ctx, other.Event("c0@example.com"))
	require.NoError(t, err)

	all, next, err := st.Invites.ListEvents(ctx, tn.AccountID, invitedb.EventFilter{}, store.Page{Limit: 2})
	require.NoError(t, err)
	require.NotNil(t, next)
	got := []string{all[0].ID, all[1].ID}
	for next != nil {
		var page []invitedb.Event
		page, next, err = st.Invites.ListEvents(ctx, tn.AccountID, invitedb.EventFilter{}, store.Page{Limit: 2, After: next})
		require.NoError(t, err)
		for _, e := range page {
			got = append(got, e.ID)
		}
	}
	assert.Equal(t, ids, got, "every event once, newest first, none of the other account's")

	byEmail, _, err := st.Invites.ListEvents(ctx, tn.AccountID, invitedb.EventFilter{CustomerEmail: "C1@EXAMPLE.COM"}, store.Page{Limit: 50})
	require.NoError(t, err)
	assert.Len(t, byEmail, 2)

	byRef, _, err := st.Invites.ListEvents(ctx, tn.AccountID, invitedb.EventFilter{TransactionReference: "order-3"}, store.Page{Limit: 50})
	require.NoError(t, err)
	require.Len(t, byRef, 1)
	assert.Equal(t, ids[1], byRef[0].ID)

	window, _, err := st.Invites.ListEvents(ctx, tn.AccountID, invitedb.EventFilter{
		ReceivedFrom: base.Add(time.Minute), ReceivedTo: base.Add(3 * time.Minute),
	}, store.Page{Limit: 50})
	require.NoError(t, err)
	assert.Len(t, window, 2, "from is inclusive, to exclusive")

	pending, _, err := st.Invites.ListEvents(ctx, tn.AccountID, invitedb.EventFilter{Status: "pending", Type: "checkout", ChannelID: tn.ChannelID}, store.Page{Limit: 50})
	require.NoError(t, err)
	assert.Len(t, pending, 5)
	none, _, err := st.Invites.ListEvents(ctx, tn.AccountID, invitedb.EventFilter{Status: "sent"}, store.Page{Limit: 50})
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestCancelAndRetryFollowTheInviteState(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "PT10S")
	tn := eventfixture.NewTenant(t, st)
	ctx := context.Background()

	setStatus := func(id string, status invite.Status) {
		_, err := st.DB().Exec(`UPDATE events SET invite_status = $2 WHERE id = $1`, id, status)
		require.NoError(t, err)
	}
	accept := func() string {
		acc, err := st.Events.AcceptEvent(ctx, tn.Event("a@example.com"))
		require.NoError(t, err)
		return acc.EventID
	}

	for status, wantErr := range map[invite.Status]error{
		invite.Pending:   nil,
		invite.Scheduled: nil,
		invite.Cancelled: nil,
		invite.Sending:   invitedb.ErrInviteState,
		invite.Sent:      invitedb.ErrInviteState,
		invite.Skipped:   invitedb.ErrInviteState,
		invite.Failed:    invitedb.ErrInviteState,
	} {
		id := accept()
		setStatus(id, status)
		e, err := st.Invites.CancelInvite(ctx, tn.AccountID, id)
		if wantErr != nil {
			assert.ErrorIs(t, err, wantErr, status)
			continue
		}
		require.NoError(t, err, status)
		assert.Equal(t, invite.Cancelled, e.InviteStatus, status)
	}

	_, err := st.Invites.CancelInvite(ctx, "acc-00000000-0000-0000-0000-000000000000", accept())
	assert.ErrorIs(t, err, store.ErrNotFound, "another account's event")

	id := accept()
	_, err = st.Invites.RetryInvite(ctx, tn.AccountID, id)
	assert.ErrorIs(t, err, invitedb.ErrInviteState, "only failed invites are retried")
	setStatus(id, invite.Failed)
	e, err := st.Invites.RetryInvite(ctx, tn.AccountID, id)
	require.NoError(t, err)
	assert.Equal(t, invite.Pending, e.InviteStatus)
	var kinds []string
	require.NoError(t, st.DB().Select(&kinds, `SELECT kind FROM outbox WHERE event_id = $1 ORDER BY id`, id))
	assert.Equal(t, []string{"start", "retry"}, kinds)
}
