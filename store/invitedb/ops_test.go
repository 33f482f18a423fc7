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

// The bulk retry's filters, each alone and together; delivery_uncertain
// only on request.
func TestFailedInvitesFilters(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a, b := account(eventfixture.Setting{}), account(eventfixture.Setting{})
	now := time.Now().UTC().Truncate(time.Millisecond)
	failed := func(acc *eventfixture.Account, reason invite.Reason, ago time.Duration) string {
		t.Helper()
		id := acc.Event(t, eventfixture.Event{Status: invite.Failed})
		_, err := st.DB().Exec(`UPDATE events SET invite_reason = $2, updated_at = $3 WHERE id = $1`, id, reason, now.Add(-ago))
		require.NoError(t, err)
		return id
	}
	rejected := failed(a, invite.Rejected, time.Hour)
	exhausted := failed(a, invite.RetriesExhausted, 3*time.Hour)
	uncertain := failed(a, invite.DeliveryUncertain, time.Hour)
	otherAccount := failed(b, invite.Rejected, time.Hour)
	old := failed(a, invite.Rejected, 48*time.Hour)
	a.Event(t, eventfixture.Event{Status: invite.Sent}) // not failed: never listed

	day := now.Add(-24 * time.Hour)
	for name, tc := range map[string]struct {
		f    invitedb.FailedFilter
		want []string
	}{
		"since":                             {invitedb.FailedFilter{Since: day}, []string{rejected, exhausted, otherAccount}},
		"until":                             {invitedb.FailedFilter{Since: day, Until: now.Add(-2 * time.Hour)}, []string{exhausted}},
		"account":                           {invitedb.FailedFilter{Since: day, AccountID: b.AccountID}, []string{otherAccount}},
		"event type":                        {invitedb.FailedFilter{Since: day, EventTypeID: a.EventTypeID}, []string{rejected, exhausted}},
		"channel":                           {invitedb.FailedFilter{Since: day, ChannelID: b.ChannelID}, []string{otherAccount}},
		"reason":                            {invitedb.FailedFilter{Since: day, Reasons: []invite.Reason{invite.RetriesExhausted}}, []string{exhausted}},
		"reasons":                           {invitedb.FailedFilter{Since: day, Reasons: []invite.Reason{invite.RetriesExhausted, invite.Rejected}}, []string{rejected, exhausted, otherAccount}},
		"include uncertain":                 {invitedb.FailedFilter{Since: day, AccountID: a.AccountID, IncludeUncertain: true}, []string{rejected, exhausted, uncertain}},
		"uncertain by reason, not included": {invitedb.FailedFilter{Since: day, Reasons: []invite.Reason{invite.DeliveryUncertain}}, nil},
		"everything":                        {invitedb.FailedFilter{IncludeUncertain: true}, []string{rejected, exhausted, uncertain, otherAccount, old}},
	} {
		tc.f.Limit = 100
		got, err := st.Invites.FailedInvites(ctx, tc.f)
		require.NoError(t, err, name)
		var ids []string
		for _, f := range got {
			ids = append(ids, f.EventID)
			assert.NotEmpty(t, f.Reason, name)
		}
		assert.ElementsMatch(t, tc.want, ids, name)
	}

	// Pages in id order, resumable after the last id.
	var seen []string
	f := invitedb.FailedFilter{IncludeUncertain: true, Limit: 2}
	for {
		page, err := st.Invites.FailedInvites(ctx, f)
		require.NoError(t, err)
		for _, p := range page {
			seen = append(seen, p.EventID)
		}
		if len(page) < f.Limit {
			break
		}
		f.AfterID = page[len(page)-1].EventID
	}
	assert.Len(t, seen, 5)
	assert.IsIncreasing(t, seen)

	got, err := st.Invites.FailedInvites(ctx, invitedb.FailedFilter{Since: day, AccountID: b.AccountID, Limit: 10})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, invitedb.FailedInvite{EventID: otherAccount, AccountID: b.AccountID, EventTypeID: b.EventTypeID,
		ChannelID: b.ChannelID, Reason: invite.Rejected, FailedAt: now.Add(-time.Hour)}, withUTC(got[0]))
}

func withUTC(f invitedb.FailedInvite) invitedb.FailedInvite {
	f.FailedAt = f.FailedAt.UTC()
	return f
}
