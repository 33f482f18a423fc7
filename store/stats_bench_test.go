package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store/statsdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// seedFunnelSQL fills the counts of a year of one account at the scale
// of 10,000,000 events without writing the events: every day and every
// quarter hour of 2025 has a row for each of 3 event types × 2 channels ×
// 6 languages × 2 media (72 keys) — 26,280 daily rows of about 381
// events and 2,522,880 quarter-hour rows of about 4 — plus a totals row
// per day and per quarter hour, as the store keeps them.
const seedFunnelSQL = `
WITH keys AS (
    SELECT 'ety-' || et AS et, 'chl-' || ch AS ch, loc, med
    FROM generate_series(1, 3) et, generate_series(1, 2) ch,
         unnest(ARRAY['da', 'de', 'en', 'es', 'fr', 'nl']) loc, unnest(ARRAY['email', 'sms']) med
), daily AS (
    INSERT INTO invite_rollups (account_id, day, event_type_id, channel_id, locale, medium,
        accepted, sent, delivered, opened, reviewed, rated_4, rated_5, skipped_recently_invited, failed)
    SELECT $1, d::date, et, ch, loc, med, 381, 320, 310, 190, 70, 20, 50, 50, 2
    FROM generate_series(DATE '2025-01-01', DATE '2025-12-31', interval '1 day') d, keys
    RETURNING 1
), daily_totals AS (
    INSERT INTO invite_rollups (account_id, day, event_type_id, channel_id, locale, medium,
        accepted, sent, delivered, opened, reviewed, rated_4, rated_5, skipped_recently_invited, failed)
    SELECT $1, d::date, '', '', '', '', 381 * 72, 320 * 72, 310 * 72, 190 * 72, 70 * 72, 20 * 72, 50 * 72, 50 * 72, 2 * 72
    FROM generate_series(DATE '2025-01-01', DATE '2025-12-31', interval '1 day') d
    RETURNING 1
), slots AS (
    INSERT INTO invite_rollup_slots (account_id, slot, event_type_id, channel_id, locale, medium,
        accepted, sent, delivered, opened, reviewed, rated_4, rated_5, skipped_recently_invited)
    SELECT $1, s, et, ch, loc, med, 4, 3, 3, 2, 1, 0, 1, 1
    FROM generate_series(TIMESTAMPTZ '2025-01-01 00:00:00+00', TIMESTAMPTZ '2025-12-31 23:45:00+00', interval '15 minutes') s, keys
    RETURNING 1
)
INSERT INTO invite_rollup_slots (account_id, slot, event_type_id, channel_id, locale, medium,
    accepted, sent, delivered, opened, reviewed, rated_4, rated_5, skipped_recently_invited)
SELECT $1, s, '', '', '', '', 288, 216, 216, 144, 72, 0, 72, 72
FROM generate_series(TIMESTAMPTZ '2025-01-01 00:00:00+00', TIMESTAMPTZ '2025-12-31 23:45:00+00', interval '15 minutes') s
WHERE (SELECT count(*) FROM daily) > 0 AND (SELECT count(*) FROM daily_totals) > 0 AND (SELECT count(*) FROM slots) > 0`

// BenchmarkFunnel reads the funnel of an account with 10,000,000 events
// in a year (seedFunnelSQL): a year grouped by day and one month grouped
// by event type, in UTC and in Europe/Berlin (whose days are read from
// the quarter hours), each with its p99 over the run. The figures are in
// docs/performance.md; the target is a p99 of 50 ms.
//
//	go test -run '^$' -bench BenchmarkFunnel -benchtime 200x ./store/
func BenchmarkFunnel(b *testing.B) {
	db := testdb.New(b)
	st := storeset.New(db, "P7D")
	ctx := context.Background()
	acc, _, err := st.Accounts.CreateAccount(ctx, "Big shop")
	require.NoError(b, err)
	start := time.Now()
	_, err = db.ExecContext(ctx, seedFunnelSQL, acc.ID)
	require.NoError(b, err)
	_, err = db.ExecContext(ctx, `ANALYZE invite_rollups; ANALYZE invite_rollup_slots`)
	require.NoError(b, err)
	b.Logf("seeded in %s", time.Since(start).Round(time.Second))
	var events int64
	require.NoError(b, db.GetContext(ctx, &events, `SELECT sum(accepted) FROM invite_rollups WHERE account_id = $1 AND event_type_id = ''`, acc.ID))
	b.Logf("%d events in the daily counts", events)

	for _, c := range []struct {
		name, from, to, tz string
		by                 stats.GroupBy
	}{
		{"year-by-day-UTC", "2025-01-01", "2025-12-31", "", stats.GroupDay},
		{"month-by-eventType-UTC", "2025-06-01", "2025-06-30", "", stats.GroupEventType},
		{"year-by-day-Berlin", "2025-01-01", "2025-12-31", "Europe/Berlin", stats.GroupDay},
		{"month-by-eventType-Berlin", "2025-06-01", "2025-06-30", "Europe/Berlin", stats.GroupEventType},
		{"year-by-locale-Kolkata", "2025-01-01", "2025-12-31", "Asia/Kolkata", stats.GroupLocale},
	} {
		b.Run(c.name, func(b *testing.B) {
			p, errs := stats.ParsePeriod(c.from, c.to, c.tz)
			require.Empty(b, errs)
			q := statsdb.Query{AccountID: acc.ID, From: p.Start(), To: p.End(), TimeZone: p.TimeZone(), GroupBy: c.by}
			var took []time.Duration
			for b.Loop() {
				t0 := time.Now()
				groups, err := st.Stats.InviteStats(ctx, q)
				took = append(took, time.Since(t0))
				if err != nil || len(groups) == 0 {
					b.Fatalf("%v, %d groups", err, len(groups))
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		})
	}
}
