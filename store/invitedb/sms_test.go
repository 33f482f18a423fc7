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

const mobile = "+4915112345678"

// textOptions are a claim's options for a worker with an SMS provider and
// a customer whose number normalises to number.
func textOptions(number string) invitedb.ClaimOptions {
	return invitedb.ClaimOptions{SMSEnabled: true, Mobile: number}
}

func TestClaimThrottleSMS(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return now })
	a := account(eventfixture.Setting{Medium: invite.SMS, MinDays: 30})
	claim := func(a *eventfixture.Account, number string) invitedb.Claim {
		t.Helper()
		c, err := st.Invites.ClaimSend(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{Status: invite.Scheduled, Mobile: number}), textOptions(number))
		require.NoError(t, err)
		return c
	}

	first := a.SentText(t, st, mobile)
	var recorded string
	require.NoError(t, st.DB().GetContext(ctx, &recorded, `SELECT customer_mobile FROM events WHERE id = $1`, first))
	assert.Equal(t, mobile, recorded, "the claim records the number")

	now = now.Add(29 * 24 * time.Hour)
	c := claim(a, mobile)
	assert.False(t, c.Send)
	assert.Equal(t, "skipped/recently_invited", string(c.State.Status)+"/"+string(c.State.Reason))

	assert.True(t, claim(a, "+4915198765432").Send, "another number")
	assert.True(t, claim(account(eventfixture.Setting{Medium: invite.SMS, MinDays: 30}), mobile).Send, "another account")
	now = now.Add(24*time.Hour + time.Second) // 30 days after the first
	sent := claim(a, mobile)
	assert.True(t, sent.Send, "after N × 24 h the number may be texted again")
	// Being sent counts as sent.
	c = claim(a, mobile)
	assert.Equal(t, "skipped/recently_invited", string(c.State.Status)+"/"+string(c.State.Reason))

	unlimited := account(eventfixture.Setting{Medium: invite.SMS, MinDays: 0})
	unlimited.SentText(t, st, mobile)
	assert.True(t, claim(unlimited, mobile).Send, "0 means no limit")
}

func TestClaimSerialisesTextsToOneNumber(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	a := account(eventfixture.Setting{Medium: invite.SMS, MinDays: 30})
	ids := make([]string, 6)
	for i := range ids {
		ids[i] = a.Event(t, eventfixture.Event{Status: invite.Scheduled, Mobile: "0151 12345678"})
	}
	assert.Equal(t, 1, claimAtOnce(t, st, ids, textOptions(mobile)), "one of the concurrent texts to a number goes out")
}
