package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// `touchpoint stats` draws an account's funnel for a period: a line per
// step with its count, share and bar.
func TestStatsCLI(t *testing.T) {
	t.Parallel()
	vars, db := opsDatabase(t)
	st := storeset.New(db, "P7D")
	ctx := context.Background()
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return at })
	acc, ch, err := st.Accounts.CreateAccount(ctx, "Shop")
	require.NoError(t, err)
	_, err = st.Accounts.CreateEventType(ctx, acc.ID, "checkout", true)
	require.NoError(t, err)
	var ids []string
	for i := range 4 {
		email := fmt.Sprintf("c%d@example.com", i)
		a, err := st.Events.AcceptEvent(ctx, eventdb.NewEvent{AccountID: acc.ID, Type: "checkout", ChannelID: ch.ID, CustomerEmail: email,
			TransactionReference: "o", TransactionDate: at, Payload: json.RawMessage(fmt.Sprintf(`{"customer":{"email":%q}}`, email))})
		require.NoError(t, err)
		ids = append(ids, a.EventID)
	}
	for _, id := range ids[:2] {
		_, err = st.Invites.MarkScheduled(ctx, invite.KindInvite, id, at)
		require.NoError(t, err)
		c, err := st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{})
		require.NoError(t, err)
		require.True(t, c.Send)
		_, err = st.Invites.FinishSend(ctx, invite.KindInvite, id, invite.SendResult{SentAt: at})
		require.NoError(t, err)
	}
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ids[0], Rating: 5, Locale: "en"})
	require.NoError(t, err)
	_, err = st.Invites.MarkSkipped(ctx, invite.KindInvite, ids[3], invite.SettingInactive)
	require.NoError(t, err)

	out, err := opsCLI(t, vars, "stats", "--account", acc.ID, "--from", "2026-03-01", "--to", "2026-03-31", "--time-zone", "Europe/Berlin")
	require.NoError(t, err)
	assert.Contains(t, out, "events accepted 2026-03-01 to 2026-03-31 (Europe/Berlin)")
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			lines[f[0]] = l
		}
	}
	assert.Regexp(t, `accepted\s+4\s+100\.0%\s+█{40}$`, lines["accepted"])
	assert.Regexp(t, `sent\s+2\s+50\.0%\s+█{20}$`, lines["sent"])
	assert.Regexp(t, `reviewed\s+1\s+25\.0%\s+█{10}$`, lines["reviewed"])
	assert.Regexp(t, `skipped\s+1\s+25\.0%`, lines["skipped"])
	assert.Regexp(t, `waiting\s+1\s+25\.0%`, lines["waiting"])
	assert.Contains(t, out, "50.0% of those sent")
	assert.Contains(t, out, "5.0 from 1 ratings")
	assert.Contains(t, out, "setting_inactive 1")

	out, err = opsCLI(t, vars, "stats", "--account", acc.ID, "--from", "2026-04-01", "--to", "2026-04-02")
	require.NoError(t, err)
	assert.Regexp(t, `accepted\s+0\s+-`, out, "another period: nothing")

	for _, bad := range [][]string{
		{},
		{"--account", "acc-1"},
		{"--account", store.NewID("acc")},
		{"--account", acc.ID, "--from", "2026-03-31", "--to", "2026-03-01"},
		{"--account", acc.ID, "--from", "2025-01-01", "--to", "2026-03-01"},
		{"--account", acc.ID, "--time-zone", "Nowhere/Else"},
		{"--account", acc.ID, "extra"},
	} {
		_, err := opsCLI(t, vars, append([]string{"stats"}, bad...)...)
		assert.Error(t, err, "%v", bad)
	}
}
