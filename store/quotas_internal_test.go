package store

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
)

// TestRemindersCountAgainstTheDailyQuotaOnly drives quotaReason as the
// reminder's send step calls it: a reminder takes from the account's
// daily send quota, never from the cap of invites to one address.
func TestRemindersCountAgainstTheDailyQuotaOnly(t *testing.T) {
	t.Parallel()
	s := New(testdb.New(t), "P7D")
	s.Quotas = Quotas{DailySends: 3, RecipientDailyCap: 1}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	ctx := context.Background()
	acc, _, err := s.CreateAccount(ctx, "Acme")
	require.NoError(t, err)
	count := func(kind sendKind) invite.Reason {
		t.Helper()
		var reason invite.Reason
		require.NoError(t, s.inTx(ctx, func(tx *sqlx.Tx) error {
			var err error
			reason, _, err = s.quotaReason(ctx, tx, acc.ID, sendAddress(invite.Email, "jane@example.com", ""), kind, 0)
			return err
		}))
		return reason
	}
	assert.Empty(t, count(quotaInvite), "the first invite to jane")
	assert.Equal(t, invite.QuotaExceeded, count(quotaInvite), "the cap of one invite to her a day")
	assert.Empty(t, count(quotaReminder), "a reminder is not capped per address …")
	assert.Empty(t, count(quotaReminder))
	assert.Equal(t, invite.QuotaExceeded, count(quotaReminder), "… but counts against the daily quota of 3")
}
