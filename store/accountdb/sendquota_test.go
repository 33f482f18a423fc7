package accountdb_test

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtally"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// TestRemindersCountAgainstTheDailyQuotaOnly drives CountSendTx as the
// send steps call it: a reminder takes from the account's daily send
// quota, never from the cap of sends to one address; a refused send
// counts nothing, and the refusal is told to OnQuotaExceeded.
func TestRemindersCountAgainstTheDailyQuotaOnly(t *testing.T) {
	t.Parallel()
	s := accountdb.New(pg.NewDB(testdb.New(t)), "P7D")
	s.Quotas = accountdb.Quotas{DailySends: 3, RecipientDailyCap: 1}
	refused := &testtally.Tally{}
	s.OnQuotaExceeded = refused.Add
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	ctx := context.Background()
	acc, _, err := s.CreateAccount(ctx, "Acme")
	require.NoError(t, err)
	jane := accountdb.SendAddress(invite.Email, "Jane@example.com", "")
	assert.Equal(t, "email:jane@example.com", jane)
	count := func(kind accountdb.SendKind) *accountdb.QuotaError {
		t.Helper()
		var qe *accountdb.QuotaError
		require.NoError(t, pg.InTx(ctx, s.Pool(), func(tx *sqlx.Tx) error {
			var err error
			qe, err = s.CountSendTx(ctx, tx, acc.ID, jane, kind)
			return err
		}))
		return qe
	}
	assert.Nil(t, count(accountdb.SendInvite), "the first invite to jane")
	assert.Equal(t, &accountdb.QuotaError{Kind: accountdb.QuotaRecipient, Limit: 1}, count(accountdb.SendInvite),
		"the cap of one invite to her a day")
	assert.Nil(t, count(accountdb.SendReminder), "a reminder is not capped per address …")
	assert.Nil(t, count(accountdb.SendReminder))
	assert.Equal(t, &accountdb.QuotaError{Kind: accountdb.QuotaDailySends, Limit: 3}, count(accountdb.SendReminder),
		"… but counts against the daily quota of 3")
	assert.Equal(t, map[string]int{accountdb.QuotaRecipient: 1, accountdb.QuotaDailySends: 1}, refused.Counts())
	var sends int
	require.NoError(t, s.Pool().GetContext(ctx, &sends, `SELECT sends FROM account_daily_sends WHERE account_id = $1`, acc.ID))
	assert.Equal(t, 3, sends, "the refused sends counted nothing")
}
