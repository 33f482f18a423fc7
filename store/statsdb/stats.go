// Package statsdb keeps the funnel's counts: each change of an event
// appends the difference it makes (invite_rollup_changes) inside the
// writer's transaction, a compactor folds them into the daily and
// quarter-hour counts (invite_rollups, invite_rollup_slots), and every
// reader adds what is not folded yet. Package stats says what is counted
// where; this package only locks the event, reads the facts, appends and
// sums.
package statsdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store/pg"
)

// The funnel's counts (package stats says what is counted where). Every
// change of an event — acceptance, each invite transition (apply), a
// review, the first opening of the feedback page, an unsubscribe —
// appends the difference it makes (stats.Delta) to invite_rollup_changes,
// last in its transaction: plain inserts, so no two changes of an account
// wait on each other's rows. FoldFunnel moves those rows into
// invite_rollups (per UTC day) and invite_rollup_slots (per quarter hour,
// with a totals row per day and per slot) in one transaction, and every
// reader adds the rows not folded yet, so the counts are exact at every
// moment whatever the compactor's delay.

// rollupCTEs are the common table expressions that add the rows of
// source — account_id, slot, event_type_id, channel_id, locale, medium
// and one column per stats.Columns, each row a change to add — to both
// tables, each beside the totals row (empty event type, channel, locale
// and medium) of its day or quarter hour, which a grouping by day reads
// alone. The slot rows wait for the daily rows (the sub-select), so every
// statement locks in the same order; only the fold runs them.
func rollupCTEs(source string) string {
	cols := stats.Columns()
	sums, sets := make([]string, len(cols)), make([]string, len(cols))
	for i, c := range cols {
		sums[i] = "sum(" + c + ")"
		sets[i] = c + " = r." + c + " + EXCLUDED." + c
	}
	const dims = "event_type_id, channel_id, locale, medium"
	list, sum, set := strings.Join(cols, ", "), strings.Join(sums, ", "), strings.Join(sets, ", ")
	return `rollup_in AS (` + source + `
), rollup_day AS (
    INSERT INTO invite_rollups AS r (account_id, day, ` + dims + `, ` + list + `)
    SELECT account_id, day, ` + dims + `, ` + sum + `
    FROM (SELECT account_id, (slot AT TIME ZONE 'UTC')::date AS day, ` + dims + `, ` + list + ` FROM rollup_in
          UNION ALL
          SELECT account_id, (slot AT TIME ZONE 'UTC')::date, '', '', '', '', ` + list + ` FROM rollup_in) x
    GROUP BY account_id, day, ` + dims + `
    ORDER BY account_id, day, ` + dims + `
    ON CONFLICT (account_id, day, ` + dims + `) DO UPDATE SET ` + set + `
    RETURNING 1
), rollup_slot AS (
    INSERT INTO invite_rollup_slots AS r (account_id, slot, ` + dims + `, ` + list + `)
    SELECT account_id, slot, ` + dims + `, ` + sum + `
    FROM (SELECT account_id, slot, ` + dims + `, ` + list + ` FROM rollup_in
          UNION ALL
          SELECT account_id, slot, '', '', '', '', ` + list + ` FROM rollup_in) x
    WHERE (SELECT count(*) FROM rollup_day) >= 0
    GROUP BY account_id, slot, ` + dims + `
    ORDER BY account_id, slot, ` + dims + `
    ON CONFLICT (account_id, slot, ` + dims + `) DO UPDATE SET ` + set + `
)`
}

// slotSQL is the quarter hour a timestamp falls in, as stats.Slot cuts it.
const slotSQL = `date_bin('15 minutes', %s, TIMESTAMPTZ '2000-01-01 00:00:00+00')`

// changeColumns lists the key and count columns of a change row.
func changeColumns() string {
	return "account_id, slot, event_type_id, channel_id, locale, medium, " + strings.Join(stats.Columns(), ", ")
}

// AcceptedCTE counts the events of the CTE ev (RETURNING
// received_at, account_id, event_type_id, channel_id, locale,
// invite_medium) as accepted and pending: one change row per key.
func AcceptedCTE() string {
	c := stats.Facts{Invite: invite.State{Status: invite.Pending}}.Counts()
	vals := make([]string, len(c))
	for i, n := range c {
		vals[i] = fmt.Sprintf("%d * count(*)", n)
	}
	return `rollup_change AS (
    INSERT INTO invite_rollup_changes (` + changeColumns() + `)
    SELECT account_id, ` + fmt.Sprintf(slotSQL, "received_at") + `, event_type_id, channel_id, locale,
        COALESCE(invite_medium, ''), ` + strings.Join(vals, ", ") + `
    FROM ev GROUP BY 1, 2, 3, 4, 5, 6
)`
}

// addRollupSQL appends keyed counts, given as parallel arrays.
func addRollupSQL() string {
	cols := stats.Columns()
	args := make([]string, len(cols))
	for i := range cols {
		args[i] = fmt.Sprintf("$%d::bigint[]", i+7)
	}
	return `INSERT INTO invite_rollup_changes (` + changeColumns() + `)
SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], ` +
		strings.Join(args, ", ") + `)`
}

// foldSQL moves up to $1 change rows into the rollup tables.
func foldSQL() string {
	return `WITH moved AS (
    DELETE FROM invite_rollup_changes
    WHERE ctid = ANY (ARRAY(SELECT ctid FROM invite_rollup_changes LIMIT $1))
    RETURNING ` + changeColumns() + `
), ` + rollupCTEs(`SELECT `+changeColumns()+` FROM moved`) + `
SELECT count(*) FROM moved`
}

// foldLock is the advisory lock that lets one compactor at a time fold
// the funnel's changes; the others skip their turn.
const foldLock = 0x746f7566 // "touf"

// FoldBatch is the most change rows one fold statement moves.
const FoldBatch = 20000

// FoldFunnel folds the funnel's changes into the rollup tables, in
// statements of at most FoldBatch rows, until none is left or another
// compactor holds the turn. It returns how many rows it folded.
func (s *Store) FoldFunnel(ctx context.Context) (int, error) {
	total := 0
	for {
		var n int
		err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
			var mine bool
			if err := tx.GetContext(ctx, &mine, `SELECT pg_try_advisory_xact_lock($1)`, foldLock); err != nil || !mine {
				return err
			}
			return s.fold.Get(ctx, tx, &n, FoldBatch)
		})
		if err != nil {
			return total, fmt.Errorf("fold the funnel: %w", err)
		}
		total += n
		if n < FoldBatch {
			return total, nil
		}
	}
}

// FoldEvery is how often RunFunnelFolder folds.
const FoldEvery = time.Second

// RunFunnelFolder folds the funnel's changes every FoldEvery until ctx
// ends (one API replica at a time does each round).
func (s *Store) RunFunnelFolder(ctx context.Context, logger *slog.Logger) error {
	t := time.NewTicker(FoldEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := s.FoldFunnel(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("folding the funnel's changes failed; will try again", "error", err)
		}
	}
}

// factsSQL reads what an event counts for.
const factsSQL = `
	SELECT e.account_id, e.received_at, e.event_type_id, e.channel_id,
	       COALESCE(e.locale, touchpoint_language(e.payload ->> 'defaultLocale')) AS locale,
	       e.invite_status, COALESCE(e.invite_reason, '') AS invite_reason, COALESCE(e.invite_medium, '') AS invite_medium,
	       e.opened_at IS NOT NULL AS opened, e.unsubscribed_at IS NOT NULL AS unsubscribed,
	       r.id IS NOT NULL AS reviewed, COALESCE(r.rating, 0) AS rating,
	       COALESCE((SELECT d.status FROM mail_deliveries d WHERE d.event_id = e.id AND d.message = 'invite'), '') AS delivery
	FROM events e LEFT JOIN reviews r ON r.event_id = e.id
	WHERE e.id = $1`

// FactsTx reads what the event counts for, in tx.
func (s *Store) FactsTx(ctx context.Context, tx *sqlx.Tx, eventID string) (stats.Facts, error) {
	var r struct {
		AccountID    string        `db:"account_id"`
		ReceivedAt   time.Time     `db:"received_at"`
		EventTypeID  string        `db:"event_type_id"`
		ChannelID    string        `db:"channel_id"`
		Locale       string        `db:"locale"`
		Status       invite.Status `db:"invite_status"`
		Reason       invite.Reason `db:"invite_reason"`
		Medium       invite.Medium `db:"invite_medium"`
		Opened       bool          `db:"opened"`
		Unsubscribed bool          `db:"unsubscribed"`
		Reviewed     bool          `db:"reviewed"`
		Rating       int           `db:"rating"`
		Delivery     string        `db:"delivery"`
	}
	if err := s.facts.Get(ctx, tx, &r, eventID); err != nil {
		return stats.Facts{}, fmt.Errorf("read counted facts: %w", err)
	}
	return stats.Facts{EventID: eventID, AccountID: r.AccountID, ReceivedAt: r.ReceivedAt, EventTypeID: r.EventTypeID, ChannelID: r.ChannelID,
		Locale: r.Locale, Invite: invite.State{Status: r.Status, Reason: r.Reason, Medium: r.Medium},
		Opened: r.Opened, Unsubscribed: r.Unsubscribed, Reviewed: r.Reviewed, Rating: r.Rating, Delivery: r.Delivery}, nil
}

// AddTx appends the keyed counts in tx, last in it (see above).
func (s *Store) AddTx(ctx context.Context, tx *sqlx.Tx, delta []stats.KeyedCounts) error {
	if len(delta) == 0 {
		return nil
	}
	n := len(delta)
	accounts, slots, types, channels, locales, media := make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n)
	counts := make([][]int64, len(stats.Columns()))
	for c := range counts {
		counts[c] = make([]int64, n)
	}
	for i, d := range delta {
		accounts[i], slots[i], types[i] = d.Key.AccountID, d.Key.Slot.UTC().Format(time.RFC3339Nano), d.Key.EventTypeID
		channels[i], locales[i], media[i] = d.Key.ChannelID, d.Key.Locale, string(d.Key.Medium)
		for c, v := range d.Counts {
			counts[c][i] = v
		}
	}
	args := []any{pq.Array(accounts), pq.Array(slots), pq.Array(types), pq.Array(channels), pq.Array(locales), pq.Array(media)}
	for _, c := range counts {
		args = append(args, pq.Array(c))
	}
	if err := s.add.Exec(ctx, tx, args...); err != nil {
		return fmt.Errorf("count the change: %w", err)
	}
	return nil
}

// CountChangeTx counts a change of the event in tx: what it counted for
// as its row reads now (before) and what it counts for after change
// edits the facts.
func (s *Store) CountChangeTx(ctx context.Context, tx *sqlx.Tx, eventID string, change func(before, after *stats.Facts)) error {
	before, err := s.FactsTx(ctx, tx, eventID)
	if err != nil {
		return err
	}
	after := before
	change(&before, &after)
	return s.AddTx(ctx, tx, stats.Delta(&before, after))
}

// ErrUnknownTimeZone: PostgreSQL does not know the time zone of a query.
var ErrUnknownTimeZone = errors.New("unknown time zone")

// Query asks for the counts of an account's events accepted in
// [From, To), grouped.
type Query struct {
	AccountID string
	From, To  time.Time // on quarter-hour edges
	// TimeZone is the IANA name the days of GroupDay are cut in; "" or
	// "UTC" for UTC.
	TimeZone string
	GroupBy  stats.GroupBy
}

// InviteStats sums the counts of q by its grouping. By day it reads the
// totals rows only: daily in UTC, per quarter hour in another time zone.
// Grouped otherwise it reads the daily rows of the whole UTC days of the
// period and the quarter-hour rows of its ends when they do not fall on
// UTC midnight. Either way it adds the changes of the period not folded
// yet, in the same statement. Keys without counts are left out.
func (s *Store) InviteStats(ctx context.Context, q Query) ([]stats.Group, error) {
	cols := stats.Columns()
	sums := make([]string, len(cols))
	for i, c := range cols {
		sums[i] = "COALESCE(sum(" + c + "), 0) AS " + c
	}
	sum, list := strings.Join(sums, ", "), strings.Join(cols, ", ")
	utc := q.TimeZone == "" || q.TimeZone == "UTC"
	// $1 is the account, $2 and $3 the period's ends.
	args := []any{q.AccountID, q.From, q.To}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	changes := func(key string) string {
		return `SELECT ` + key + ` AS key, ` + list + ` FROM invite_rollup_changes
			WHERE account_id = $1 AND slot >= $2 AND slot < $3`
	}
	var parts []string
	switch {
	case q.GroupBy == stats.GroupDay && utc:
		parts = []string{`SELECT to_char(day, 'YYYY-MM-DD') AS key, ` + list + ` FROM invite_rollups
				WHERE account_id = $1 AND event_type_id = '' AND day >= ` + arg(q.From.UTC().Format(time.DateOnly)) +
			`::date AND day < ` + arg(q.To.UTC().Format(time.DateOnly)) + `::date`,
			changes(`to_char(slot AT TIME ZONE 'UTC', 'YYYY-MM-DD')`)}
	case q.GroupBy == stats.GroupDay:
		tz := arg(q.TimeZone)
		parts = []string{`SELECT to_char(slot AT TIME ZONE ` + tz + `, 'YYYY-MM-DD') AS key, ` + list + ` FROM invite_rollup_slots
				WHERE account_id = $1 AND event_type_id = '' AND slot >= $2 AND slot < $3`,
			changes(`to_char(slot AT TIME ZONE ` + tz + `, 'YYYY-MM-DD')`)}
	default:
		key := map[stats.GroupBy]string{stats.GroupEventType: "event_type_id", stats.GroupChannel: "channel_id",
			stats.GroupLocale: "locale", stats.GroupMedium: "medium"}[q.GroupBy]
		if key == "" {
			return nil, fmt.Errorf("invite stats: unknown grouping %q", q.GroupBy)
		}
		// Whole UTC days inside the period from the daily rows, the
		// quarter hours before the first and after the last from the
		// slot rows; each part only when it is not empty.
		firstDay := q.From.UTC().Truncate(24 * time.Hour)
		if firstDay.Before(q.From) {
			firstDay = firstDay.Add(24 * time.Hour)
		}
		endDay := q.To.UTC().Truncate(24 * time.Hour)
		slotPart := func(from, to time.Time) {
			if from.Before(to) {
				parts = append(parts, `SELECT `+key+` AS key, `+list+` FROM invite_rollup_slots
					WHERE account_id = $1 AND slot >= `+arg(from)+` AND slot < `+arg(to)+` AND event_type_id <> ''`)
			}
		}
		if firstDay.Before(endDay) {
			parts = append(parts, `SELECT `+key+` AS key, `+list+` FROM invite_rollups
				WHERE account_id = $1 AND day >= `+arg(firstDay.Format(time.DateOnly))+`::date AND day < `+
				arg(endDay.Format(time.DateOnly))+`::date AND event_type_id <> ''`)
			slotPart(q.From, firstDay)
			slotPart(endDay, q.To)
		} else {
			slotPart(q.From, q.To)
		}
		parts = append(parts, changes(key))
	}
	query := `SELECT key, ` + sum + ` FROM (` + strings.Join(parts, " UNION ALL ") + `) x GROUP BY key ORDER BY key`
	rows, err := s.Read(ctx).QueryxContext(ctx, query, args...)
	if err != nil {
		var pqErr *pq.Error
		if errors.As(err, &pqErr) && pqErr.Code == "22023" { // invalid_parameter_value: time zone not recognized
			return nil, ErrUnknownTimeZone
		}
		return nil, fmt.Errorf("invite stats: %w", pg.Translate(err))
	}
	defer rows.Close()
	var out []stats.Group
	for rows.Next() {
		var g stats.Group
		dest := []any{&g.Key}
		for i := range g.Counts {
			dest = append(dest, &g.Counts[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("invite stats: %w", pg.Translate(err))
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("invite stats: %w", pg.Translate(err))
	}
	return out, nil
}

// Store is the repository of the funnel's counts.
type Store struct {
	*pg.DB
	db *sqlx.DB
	// Run inside the transaction of every counted change, prepared once.
	lockEvent, facts, add *pg.Stmt
	fold                  *pg.Stmt
}

// New is the repository on db.
func New(db *pg.DB) *Store {
	return &Store{DB: db, db: db.Pool(), lockEvent: pg.NewStmt(db.Pool(), lockEventSQL), facts: pg.NewStmt(db.Pool(), factsSQL),
		add: pg.NewStmt(db.Pool(), addRollupSQL()), fold: pg.NewStmt(db.Pool(), foldSQL())}
}

// Prepare makes the statements a counted change runs ready before its
// transaction begins (see pg.Stmt.On).
func (s *Store) Prepare(ctx context.Context) error {
	return pg.PrepareAll(ctx, s.lockEvent, s.facts, s.add)
}

// lockEventSQL locks an event's row for a change that is counted, so the
// facts read after it are the ones the change starts from.
const lockEventSQL = `SELECT 1 FROM events WHERE id = $1 FOR NO KEY UPDATE`

// LockEventTx locks the event's row in tx for a change that is counted
// (lockEventSQL), before FactsTx reads what it counts for.
func (s *Store) LockEventTx(ctx context.Context, tx *sqlx.Tx, eventID string) error {
	return s.lockEvent.Exec(ctx, tx, eventID)
}
