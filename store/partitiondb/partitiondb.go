// Package partitiondb keeps the monthly partitions of the tables that grow
// with traffic: it makes them ahead of time, drops whole months once what
// they hold is no longer kept (retention without a DELETE, so without
// VACUUM debt), says how many months are ready ahead, and moves an
// installation whose tables are not partitioned yet onto partitioned ones
// (Move). Which tables are partitioned, and how, is the schema's
// (schema/0032_monthly_partitions.sql); what is kept how long is here.
package partitiondb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/store/pg"
)

// Ahead is how many months after the current one housekeeping keeps
// partitions ready for; AlertBelow is the number of ready months under
// which the metric touchpoint_partitions_ahead alerts.
const (
	Ahead      = 3
	AlertBelow = 2
)

// A group is tables whose months are dropped together, under one rule.
type group struct {
	// tables are dropped in this order; the last one holds the rows that
	// decide (open).
	tables []string
	// keep is how long after a month has ended it is kept; kept reports
	// whether the group is kept forever (retention 0).
	keep func(o Options) (time.Duration, bool)
	// open are conditions on the deciding table's rows: a month with a
	// row that meets one is kept whatever its age, as work not finished.
	// Each is the predicate of a partial index, so that asking costs an
	// index look-up, not a scan of a month of rows beside the accepts.
	open []string
}

// groups are the partitioned tables by how long their months are kept.
var groups = []group{
	// An event and what is kept by its id live in its month, and go with
	// it once it is older than the retention: attempts, provider reports
	// and its quarter hour's counts first, the event last. A month with
	// an invite or reminder still to be sent stays.
	{tables: []string{"send_attempts", "mail_events", "mail_deliveries", "sms_deliveries", "invite_rollup_slots", "events"},
		keep: func(o Options) (time.Duration, bool) { return o.Retention, o.Retention <= 0 },
		open: []string{`invite_status = 'scheduled'`, `invite_status IN ('pending', 'sending')`,
			`reminder_status = 'scheduled'`, `reminder_status = 'sending'`}},
	// Start orders: done ones are deleted as they age (housekeeping); a
	// month goes once every order in it is done.
	{tables: []string{"outbox"}, keep: func(o Options) (time.Duration, bool) { return o.OutboxKeep, false },
		open: []string{`done_at IS NULL`}},
	// Webhook deliveries stay listed for WebhookKeep after their month.
	{tables: []string{"webhook_deliveries"}, keep: func(o Options) (time.Duration, bool) { return o.WebhookKeep, false },
		open: []string{`status = 'pending'`}},
	// A token's use is of no use once the token has expired.
	{tables: []string{"token_uses"}, keep: func(Options) (time.Duration, bool) { return 0, false }},
}

// Options are how long each kind of month is kept.
type Options struct {
	// Retention keeps events (and their rows) this long; 0 keeps them
	// forever (TOUCHPOINT_EVENT_RETENTION).
	Retention time.Duration
	// OutboxKeep and WebhookKeep keep the start orders and webhook
	// deliveries of a month this long after the month has ended.
	OutboxKeep, WebhookKeep time.Duration
	// LockTimeout bounds each wait for a lock (0: 2 s); a month not made
	// or dropped for it is made or dropped by the next round.
	LockTimeout time.Duration
}

// Store keeps the partitions of one database.
type Store struct {
	*pg.DB
	db *sqlx.DB
}

// New is the partitions' keeper on db.
func New(db *pg.DB) *Store { return &Store{DB: db, db: db.Pool()} }

// Round is what one round of Maintain did.
type Round struct {
	// Made is how many partitions were made.
	Made int
	// Dropped are the partitions dropped, and Held the months old enough
	// to go that were kept because work in them is not done.
	Dropped, Held []string
}

// maintainLock is the advisory lock that lets one process at a time
// maintain the partitions; the others skip the round.
const maintainLock = 0x746f75636d // "toucm"

// Maintain makes the partitions of this month and the Ahead months after
// it, and drops the months that are no longer kept, each with DETACH
// PARTITION CONCURRENTLY (which never blocks reads or writes of the table)
// and DROP TABLE. It returns ran=false when another process holds the round.
func (s *Store) Maintain(ctx context.Context, o Options) (r Round, ran bool, err error) {
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return r, false, fmt.Errorf("partitions: %w", pg.Translate(err))
	}
	defer conn.Close()
	if err := conn.GetContext(ctx, &ran, `SELECT pg_try_advisory_lock($1)`, maintainLock); err != nil || !ran {
		return r, false, pg.Translate(err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, maintainLock) // closing releases it too
	timeout := o.LockTimeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`SET lock_timeout = %d`, timeout.Milliseconds())); err != nil {
		return r, true, pg.Translate(err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `RESET lock_timeout`)

	now := s.Now()
	if err := conn.GetContext(ctx, &r.Made, `SELECT touchpoint_ensure_partitions($1, $2)`,
		now, now.AddDate(0, Ahead, 0)); err != nil {
		return r, true, fmt.Errorf("make partitions: %w", pg.Translate(err))
	}
	for _, g := range groups {
		if err := s.dropGroup(ctx, conn, g, o, now, &r); err != nil {
			return r, true, err
		}
	}
	return r, true, nil
}

// dropGroup drops the months of g that are no longer kept.
func (s *Store) dropGroup(ctx context.Context, conn *sqlx.Conn, g group, o Options, now time.Time, r *Round) error {
	keep, forever := g.keep(o)
	if forever {
		return nil
	}
	decider := g.tables[len(g.tables)-1]
	parts, err := partitionsOf(ctx, conn, decider)
	if err != nil {
		return err
	}
	// A detach that was interrupted is finished first: no other partition
	// of the table can be detached while one is pending.
	slices.SortStableFunc(parts, func(a, b partition) int {
		switch {
		case a.detaching == b.detaching:
			return 0
		case a.detaching:
			return -1
		}
		return 1
	})
	for _, p := range parts {
		if p.month.AddDate(0, 1, 0).After(now.Add(-keep)) {
			continue // still kept
		}
		if len(g.open) > 0 && !p.detaching {
			var open bool
			if err := conn.GetContext(ctx, &open, openSQL(p.name, g.open)); err != nil {
				return fmt.Errorf("partitions: look into %s: %w", p.name, pg.Translate(err))
			}
			if open {
				r.Held = append(r.Held, p.name)
				continue
			}
		}
		for _, t := range g.tables {
			name := t + "_" + p.month.Format("2006_01")
			dropped, err := dropPartition(ctx, conn, t, name)
			if err != nil {
				return err
			}
			if dropped {
				r.Dropped = append(r.Dropped, name)
			}
		}
	}
	return nil
}

// openSQL asks whether table has a row that meets one of conds, one
// EXISTS a condition, so that each is answered by its partial index.
func openSQL(table string, conds []string) string {
	ask := make([]string, len(conds))
	for i, c := range conds {
		ask[i] = `EXISTS (SELECT 1 FROM ` + pq.QuoteIdentifier(table) + ` WHERE ` + c + `)`
	}
	return `SELECT ` + strings.Join(ask, ` OR `)
}

// dropPartition detaches the partition name of parent concurrently (or
// finishes a detach that was interrupted) and drops it; false when there
// is no such partition.
func dropPartition(ctx context.Context, conn *sqlx.Conn, parent, name string) (bool, error) {
	var pending sql.NullBool
	err := conn.GetContext(ctx, &pending, `SELECT i.inhdetachpending FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relname = $1 AND i.inhparent = to_regclass('public.' || quote_ident($2))`, name, parent)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("partitions: find %s: %w", name, pg.Translate(err))
	}
	how := "CONCURRENTLY"
	if pending.Bool {
		how = "FINALIZE"
	}
	if _, err := conn.ExecContext(ctx, `ALTER TABLE `+pq.QuoteIdentifier(parent)+` DETACH PARTITION `+
		pq.QuoteIdentifier(name)+` `+how); err != nil {
		return false, fmt.Errorf("partitions: detach %s: %w", name, pg.Translate(err))
	}
	if _, err := conn.ExecContext(ctx, `DROP TABLE `+pq.QuoteIdentifier(name)); err != nil {
		return false, fmt.Errorf("partitions: drop %s: %w", name, pg.Translate(err))
	}
	return true, nil
}

// partition is a monthly partition of a table.
type partition struct {
	name      string
	month     time.Time // its first instant, UTC
	detaching bool      // a DETACH CONCURRENTLY was interrupted
}

// monthName is how a monthly partition is named: <table>_YYYY_MM.
var monthName = regexp.MustCompile(`_(\d{4})_(\d{2})$`)

// partitionsOf lists the monthly partitions of the table public.parent,
// oldest first.
func partitionsOf(ctx context.Context, q sqlx.QueryerContext, parent string) ([]partition, error) {
	var rows []struct {
		Name      string `db:"relname"`
		Detaching bool   `db:"inhdetachpending"`
	}
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT c.relname, i.inhdetachpending FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = to_regclass('public.' || quote_ident($1))`, parent); err != nil {
		return nil, fmt.Errorf("partitions of %s: %w", parent, pg.Translate(err))
	}
	var out []partition
	for _, row := range rows {
		m := monthName.FindStringSubmatch(row.Name)
		if m == nil || row.Name != parent+m[0] {
			continue
		}
		month, err := time.Parse("2006_01", m[1]+"_"+m[2])
		if err != nil {
			continue
		}
		out = append(out, partition{name: row.Name, month: month, detaching: row.Detaching})
	}
	slices.SortFunc(out, func(a, b partition) int { return a.month.Compare(b.month) })
	return out, nil
}

// MonthsAhead is the fewest months after the current one that any
// partitioned table has partitions ready for, counted from the next month
// until the first one missing (touchpoint_partitions_ahead).
func (s *Store) MonthsAhead(ctx context.Context) (int, error) {
	var parents []string
	if err := s.db.SelectContext(ctx, &parents, `SELECT c.relname FROM pg_partitioned_table p
		JOIN pg_class c ON c.oid = p.partrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND NOT c.relispartition ORDER BY 1`); err != nil {
		return 0, fmt.Errorf("partitioned tables: %w", pg.Translate(err))
	}
	this := monthOf(s.Now())
	fewest := -1
	for _, t := range parents {
		parts, err := partitionsOf(ctx, s.db, t)
		if err != nil {
			return 0, err
		}
		have := map[time.Time]bool{}
		for _, p := range parts {
			have[p.month] = true
		}
		n := 0
		for have[this.AddDate(0, n+1, 0)] {
			n++
		}
		if fewest < 0 || n < fewest {
			fewest = n
		}
	}
	return max(fewest, 0), nil
}

// monthOf is the first instant of t's month, UTC.
func monthOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}
