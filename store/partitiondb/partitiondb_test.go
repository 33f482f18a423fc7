package partitiondb_test

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/partitiondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

func keeper(t *testing.T, now time.Time) (*partitiondb.Store, *pg.DB) {
	t.Helper()
	base := pg.NewDB(testdb.New(t))
	base.SetClock(func() time.Time { return now })
	return partitiondb.New(base), base
}

func exists(t *testing.T, db *sqlx.DB, table string) bool {
	t.Helper()
	var ok bool
	require.NoError(t, db.Get(&ok, `SELECT to_regclass('public.' || $1) IS NOT NULL`, table))
	return ok
}

func TestMaintainMakesMonthsAheadAndCountsThem(t *testing.T) {
	t.Parallel()
	now := time.Date(2031, 5, 15, 12, 0, 0, 0, time.UTC)
	s, base := keeper(t, now)
	ctx := context.Background()

	// The clock of a test gets its month and the next: one month ready.
	n, err := s.MonthsAhead(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Less(t, n, partitiondb.AlertBelow)

	r, ran, err := s.Maintain(ctx, partitiondb.Options{})
	require.NoError(t, err)
	require.True(t, ran)
	assert.Equal(t, 2*9, r.Made, "July and August of the nine tables")
	n, err = s.MonthsAhead(ctx)
	require.NoError(t, err)
	assert.Equal(t, partitiondb.Ahead, n)
	for _, table := range []string{"events", "send_attempts", "outbox", "webhook_deliveries", "token_uses", "invite_rollup_slots"} {
		assert.True(t, exists(t, base.Pool(), table+"_2031_08"), table)
	}

	// The fewest months of any table count, up to the first missing.
	_, err = base.Pool().Exec(`ALTER TABLE outbox DETACH PARTITION outbox_2031_07`)
	require.NoError(t, err)
	n, err = s.MonthsAhead(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	// A round again makes only what is missing.
	_, err = base.Pool().Exec(`DROP TABLE outbox_2031_07`)
	require.NoError(t, err)
	r, _, err = s.Maintain(ctx, partitiondb.Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, r.Made)
}

func TestMaintainRunsInOneProcessAtATime(t *testing.T) {
	t.Parallel()
	s, base := keeper(t, time.Now())
	ctx := context.Background()
	conn, err := base.Pool().Connx(ctx)
	require.NoError(t, err)
	defer conn.Close()
	var got bool
	require.NoError(t, conn.GetContext(ctx, &got, `SELECT pg_try_advisory_lock(x'746f75636d'::bigint)`))
	require.True(t, got)
	_, ran, err := s.Maintain(ctx, partitiondb.Options{})
	require.NoError(t, err)
	assert.False(t, ran, "another process holds the round")
}

// TestRetentionDropsWholeMonths drops the months past their keep, each
// table by its rule, and holds a month whose work is not done.
func TestRetentionDropsWholeMonths(t *testing.T) {
	t.Parallel()
	dec, jan, feb := time.Date(2025, 12, 10, 9, 0, 0, 0, time.UTC), time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC),
		time.Date(2026, 2, 10, 9, 0, 0, 0, time.UTC)
	s, base := keeper(t, jan)
	db := base.Pool()
	ctx := context.Background()
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	ended := a.Event(t, eventfixture.Event{ReceivedAt: jan, Status: invite.Sent, SentAt: jan})
	scheduled := a.Event(t, eventfixture.Event{ReceivedAt: dec, Status: invite.Scheduled})
	kept := a.Event(t, eventfixture.Event{ReceivedAt: feb, Status: invite.Sent, SentAt: feb})
	for _, e := range []struct {
		id string
		at time.Time
	}{{ended, jan}, {scheduled, dec}, {kept, feb}} {
		_, err := db.Exec(`INSERT INTO send_attempts (event_id, kind, n, started_at, event_received_at) VALUES ($1, 'invite', 1, $2, $2)`,
			e.id, e.at)
		require.NoError(t, err)
		_, err = db.Exec(`INSERT INTO outbox (event_id, created_at, next_attempt_at, done_at) VALUES ($1, $2, $2, $2)`, e.id, e.at)
		require.NoError(t, err)
	}
	// December's outbox has an order not started yet; January's webhook
	// delivery is pending, February's has ended.
	_, err := db.Exec(`INSERT INTO outbox (event_id, created_at, next_attempt_at) VALUES ($1, $2, $2)`, scheduled, dec)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created_at, updated_at)
		VALUES ('whk-1', $1, 'https://hooks.example.com', '{invite.sent}', '\x00', $2, $2)`, a.AccountID, dec)
	require.NoError(t, err)
	for _, d := range []struct {
		status string
		at     time.Time
	}{{"pending", jan}, {"succeeded", feb}} {
		_, err = db.Exec(`INSERT INTO webhook_deliveries (id, endpoint_id, account_id, type, payload, status, created_at, next_start_at)
			VALUES ($1, 'whk-1', $2, 'invite.sent', '{}', $3, $4, $4)`, pg.NewTimeID("msg", d.at), a.AccountID, d.status, d.at)
		require.NoError(t, err)
	}

	o := partitiondb.Options{Retention: 400 * 24 * time.Hour, OutboxKeep: time.Hour, WebhookKeep: 30 * 24 * time.Hour}
	// 400 days after the end of January: December and January are past
	// the retention, February is not.
	now := time.Date(2027, 3, 10, 0, 0, 0, 0, time.UTC)
	base.SetClock(func() time.Time { return now })
	r, _, err := s.Maintain(ctx, o)
	require.NoError(t, err)
	for _, gone := range []string{"events_2026_01", "send_attempts_2026_01", "mail_events_2026_01", "invite_rollup_slots_2026_01",
		"outbox_2026_01", "outbox_2026_02", "webhook_deliveries_2026_02", "token_uses_2026_01"} {
		assert.Contains(t, r.Dropped, gone)
		assert.False(t, exists(t, db, gone), gone)
	}
	assert.Equal(t, []string{"events_2025_12", "outbox_2025_12", "webhook_deliveries_2026_01"}, r.Held,
		"an invite still scheduled, an order not started, a delivery pending")
	for _, stays := range []string{"events_2025_12", "send_attempts_2025_12", "events_2026_02", "send_attempts_2026_02"} {
		assert.True(t, exists(t, db, stays), stays)
	}
	var ids []string
	require.NoError(t, db.Select(&ids, `SELECT id FROM events ORDER BY received_at`))
	assert.Equal(t, []string{scheduled, kept}, ids)
	require.NoError(t, db.Select(&ids, `SELECT event_id FROM send_attempts ORDER BY event_received_at`))
	assert.Equal(t, []string{scheduled, kept}, ids)

	// Without a retention, events are kept whatever their age.
	base.SetClock(func() time.Time { return now.AddDate(5, 0, 0) })
	o.Retention = 0
	r, _, err = s.Maintain(ctx, o)
	require.NoError(t, err)
	assert.NotContains(t, r.Dropped, "events_2026_02")
	assert.True(t, exists(t, db, "events_2026_02"))
}

// TestMaintainFinishesAnInterruptedDetach drops a month whose DETACH
// CONCURRENTLY was cancelled half way (it waits for every transaction
// that may still see the partition, and an operator may stop it).
func TestMaintainFinishesAnInterruptedDetach(t *testing.T) {
	t.Parallel()
	jan := time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)
	s, base := keeper(t, jan)
	db := base.Pool()
	ctx := context.Background()

	// A transaction that has looked at token_uses holds the detach in
	// its wait; the detach is then cancelled.
	reader, err := db.Beginx()
	require.NoError(t, err)
	defer reader.Rollback()
	_, err = reader.Exec(`SELECT count(*) FROM token_uses`)
	require.NoError(t, err)
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = db.ExecContext(cctx, `ALTER TABLE token_uses DETACH PARTITION token_uses_2026_01 CONCURRENTLY`)
	require.Error(t, err)
	require.NoError(t, reader.Rollback())
	var pending bool
	require.NoError(t, db.Get(&pending, `SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = 'token_uses_2026_01'::regclass`))
	require.True(t, pending, "the detach stopped half way")

	base.SetClock(func() time.Time { return jan.AddDate(0, 2, 0) })
	r, _, err := s.Maintain(ctx, partitiondb.Options{})
	require.NoError(t, err)
	assert.Contains(t, r.Dropped, "token_uses_2026_01")
	assert.False(t, exists(t, db, "token_uses_2026_01"))
}
