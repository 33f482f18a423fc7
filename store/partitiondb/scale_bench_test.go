package partitiondb_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/partitiondb"
)

// scaleRows is how many events BenchmarkPartitionsAtScale spreads over
// twelve months: 20,000,000, or TOUCHPOINT_PARTITION_BENCH_ROWS.
func scaleRows(b *testing.B) int {
	return testdb.Rows(b, "TOUCHPOINT_PARTITION_BENCH_ROWS", 20_000_000, 1200)
}

// BenchmarkPartitionsAtScale measures the partitioned events table at
// scale: one account's events over the twelve months before this one (all
// sent; 50,000 customers, or a quarter as many as events). It reports the
// p99 of the event list's first page and of the console's two searches
// (by customer email, by order reference), logging each one's plans once
// (auto_explain, analyze); then how long housekeeping takes to drop the
// oldest month, the p99 of the accepts around it (aroundDrop before it,
// those during it, aroundDrop after it), and the dead tuples the drop leaves (none:
// nothing is deleted).
// Targets: the lists p99 ≤ 20 ms, the drop ≤ 1 s, accepts p99 ≤ 25 ms.
// Run it on a quiet machine:
//
//	go test -run '^$' -bench PartitionsAtScale -benchtime 1000x -timeout 3h -v ./store/partitiondb/
//
// (TOUCHPOINT_PARTITION_BENCH_ROWS=120000 makes a quick run.)
func BenchmarkPartitionsAtScale(b *testing.B) {
	rows := scaleRows(b)
	base := testdb.New(b)
	ctx := context.Background()
	a := eventfixture.NewAccount(b, base, eventfixture.Setting{})
	now := time.Now().UTC()
	thisMonth := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	first := thisMonth.AddDate(0, -12, 0)
	if _, err := base.ExecContext(ctx, `SELECT touchpoint_ensure_partitions($1, $2)`, first, now); err != nil {
		b.Fatal(err)
	}
	customers := min(50_000, rows/4)
	start := time.Now()
	for m := range 12 {
		seedMonth(b, base, a, first, m, rows, customers)
	}
	if _, err := base.ExecContext(ctx, `VACUUM ANALYZE events`); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d events over 12 months in %s", rows, time.Since(start).Round(time.Second))

	// The lists, on one connection, so that auto_explain holds for them.
	ex := testdb.NewExplainer(b, base)
	lists := store.New(ex.DB, "P7D")
	searches := []struct {
		name   string
		filter func(i int) invitedb.EventFilter
	}{
		{"list", func(int) invitedb.EventFilter { return invitedb.EventFilter{} }},
		{"by-email", func(i int) invitedb.EventFilter {
			return invitedb.EventFilter{CustomerEmail: fmt.Sprintf("c%d@example.com", i*7919%customers)}
		}},
		{"by-order", func(i int) invitedb.EventFilter {
			return invitedb.EventFilter{TransactionReference: fmt.Sprintf("T-%d", 1+i*7919%rows)}
		}},
	}
	// Seeded once, measured in sub-benchmarks: Go runs a benchmark's body
	// again for the count of -benchtime, and only a sub-benchmark's.
	explained := false
	b.Run("lists", func(b *testing.B) {
		took := make([][]time.Duration, len(searches))
		for i := range b.N {
			for k, s := range searches {
				explain := !explained && i == 0
				if explain {
					ex.Explain(b, true)
				}
				t0 := time.Now()
				page, _, err := lists.Invites.ListEvents(ctx, a.AccountID, s.filter(i), store.Page{Limit: 50})
				took[k] = append(took[k], time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if len(page) == 0 {
					b.Fatalf("%s found nothing", s.name)
				}
				if explain {
					b.Logf("plans of %s:\n%s", s.name, ex.Take())
					ex.Explain(b, false)
				}
			}
			explained = true
		}
		for k, s := range searches {
			b.ReportMetric(p99(took[k]), s.name+"-p99-ms")
		}
	})

	// A month can be dropped once: the first run drops it, and every run
	// reports that drop.
	var drop dropped
	b.Run("drop", func(b *testing.B) {
		if drop.took == 0 {
			drop = dropOldest(b, base, a, now.Sub(first.AddDate(0, 1, 0))-time.Hour, "events_"+first.Format("2006_01"))
		}
		b.ReportMetric(float64(drop.took.Microseconds())/1000, "drop-ms")
		b.ReportMetric(p99(drop.accepts), "accept-p99-ms")
		// Apart, to tell the drop's cost from the accepts' own.
		b.ReportMetric(p99(drop.accepts[:drop.before]), "accept-before-p99-ms")
		b.ReportMetric(p99(drop.accepts[drop.before:drop.before+drop.during]), "accept-during-p99-ms")
		b.ReportMetric(p99(drop.accepts[drop.before+drop.during:]), "accept-after-p99-ms")
		b.ReportMetric(float64(drop.deadAdded), "dead-tuples-added")
	})
}

// seedMonth loads month m (0 to 11 after first) of the rows events
// spread over twelve months (event i falls in month i % 12, spread over
// the month's seconds). Its partition is detached and stripped of its
// indexes while it is loaded, and attached again, which builds them: as
// fast a load as PostgreSQL has, with the indexes a REINDEX would leave.
func seedMonth(b *testing.B, db *sqlx.DB, a *eventfixture.Account, first time.Time, m, rows, customers int) {
	ctx := context.Background()
	conn, err := db.Connx(ctx) // one session: its maintenance_work_mem builds the indexes
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	from, to := first.AddDate(0, m, 0), first.AddDate(0, m+1, 0)
	part := "events_" + from.Format("2006_01")
	exec := func(q string, args ...any) {
		b.Helper()
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			b.Fatalf("seed %s: %v\n%s", part, err, q)
		}
	}
	exec(`SET maintenance_work_mem = '1GB'`)
	exec(`ALTER TABLE events DETACH PARTITION ` + part)
	var constraints, indexes []string
	if err := conn.SelectContext(ctx, &constraints, `SELECT conname FROM pg_constraint
		WHERE conrelid = $1::regclass AND conindid <> 0`, part); err != nil {
		b.Fatal(err)
	}
	for _, c := range constraints {
		exec(`ALTER TABLE ` + part + ` DROP CONSTRAINT ` + c)
	}
	if err := conn.SelectContext(ctx, &indexes, `SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = $1::regclass`, part); err != nil {
		b.Fatal(err)
	}
	for _, ix := range indexes {
		exec(`DROP INDEX ` + ix)
	}
	start := m
	if start == 0 {
		start = 12
	}
	exec(`INSERT INTO `+part+` (id, account_id, event_type_id, channel_id, received_at, type,
			customer_email, customer_reference, transaction_reference, transaction_date, payload, invite_setting_id, delay,
			delay_from, invite_status, sent_at, attempts, updated_at)
		SELECT 'evt-' || gen_random_uuid(), $1, $2, $3, at, 'order', 'c' || (i % $8) || '@example.com', 'C-' || (i % $8),
			'T-' || i, at, '{}', $4, 'PT0S', 'event', 'sent', at + interval '1 minute', 1, at + interval '1 minute'
		FROM generate_series($5::int, $6::int, 12) i,
		LATERAL (SELECT $7::timestamptz + (i / 12 % 2400000) * interval '1 second' AS at) t`,
		a.AccountID, a.EventTypeID, a.ChannelID, a.SettingID, start, rows, from, customers)
	exec(fmt.Sprintf(`ALTER TABLE events ATTACH PARTITION %s FOR VALUES FROM ('%s') TO ('%s')`,
		part, from.Format(time.RFC3339), to.Format(time.RFC3339)))
	var mine, parents int
	if err := conn.GetContext(ctx, &mine, `SELECT count(*) FROM pg_index WHERE indrelid = $1::regclass`, part); err != nil {
		b.Fatal(err)
	}
	if err := conn.GetContext(ctx, &parents, `SELECT count(*) FROM pg_index WHERE indrelid = 'events'::regclass`); err != nil {
		b.Fatal(err)
	}
	if mine != parents {
		b.Fatalf("seed %s: %d indexes after attaching, the table has %d", part, mine, parents)
	}
}

// aroundDrop is how many accepts are measured before the drop, and again
// after it, beside those made while it runs.
const aroundDrop = 1000

// dropped is what dropping a month did.
type dropped struct {
	took           time.Duration
	accepts        []time.Duration // aroundDrop accepts before the drop, those during it, aroundDrop after
	before, during int             // how many of them came before the drop, and during it
	deadAdded      int64           // dead tuples of the events partitions
}

// dropOldest has housekeeping drop the months past keep, which must
// include month (an events partition), while four clients accept events.
func dropOldest(b *testing.B, db *sqlx.DB, a *eventfixture.Account, keep time.Duration, month string) dropped {
	ctx := context.Background()
	st := store.New(db, "P7D")
	parts := st.Partitions
	if _, _, err := parts.Maintain(ctx, partitiondb.Options{}); err != nil { // the months ahead, first
		b.Fatal(err)
	}
	deadBefore := deadTuples(b, db)
	var mu sync.Mutex
	var out dropped
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				_, err := st.Events.AcceptEvent(ctx, eventdb.NewEvent{AccountID: a.AccountID, Type: "order", ChannelID: a.ChannelID,
					CustomerEmail: "new@example.com", TransactionReference: fmt.Sprintf("N-%d-%d", w, i), TransactionDate: time.Now(),
					Payload: []byte(`{"customer":{"email":"new@example.com"}}`)})
				d := time.Since(t0)
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				out.accepts = append(out.accepts, d)
				mu.Unlock()
			}
		})
	}
	acceptsMade := func(n int) func() bool {
		return func() bool { mu.Lock(); defer mu.Unlock(); return len(out.accepts) >= n }
	}
	require.Eventually(b, acceptsMade(aroundDrop), time.Minute, 10*time.Millisecond, "accepts before the drop")
	mu.Lock()
	out.before = len(out.accepts)
	mu.Unlock()
	t0 := time.Now()
	round, _, err := parts.Maintain(ctx, partitiondb.Options{Retention: keep, OutboxKeep: 1000 * time.Hour, WebhookKeep: 1000 * time.Hour})
	out.took = time.Since(t0)
	mu.Lock()
	during := len(out.accepts)
	out.during = during - out.before
	mu.Unlock()
	require.Eventually(b, acceptsMade(during+aroundDrop), time.Minute, 10*time.Millisecond, "accepts after the drop")
	close(stop)
	wg.Wait()
	if err != nil {
		b.Fatal(err)
	}
	if !slices.Contains(round.Dropped, month) {
		b.Fatalf("%s was not dropped: %+v", month, round)
	}
	b.Logf("dropped %s in %s; %d accepts meanwhile", strings.Join(round.Dropped, ", "), out.took.Round(time.Millisecond), len(out.accepts))
	out.deadAdded = deadTuples(b, db) - deadBefore
	return out
}

// p99 is the 99th percentile of ds, in milliseconds.
func p99(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0 // none measured (a drop too quick for an accept)
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[(len(s)*99+99)/100-1].Microseconds()) / 1000
}

// deadTuples is the dead tuples of the events partitions, as the
// statistics have them once this session's counts are flushed.
func deadTuples(b *testing.B, db *sqlx.DB) int64 {
	b.Helper()
	var n int64
	if err := db.Get(&n, `SELECT COALESCE(sum(n_dead_tup), 0)::bigint FROM pg_stat_user_tables, pg_stat_force_next_flush()
		WHERE relname LIKE 'events\_%'`); err != nil {
		b.Fatal(err)
	}
	return n
}
