package partitiondb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/store/pg"
)

// An installation whose tables held rows when the partitioned tables came
// (schema/0032_monthly_partitions.sql) has each partitioned table empty,
// under its own name, in the schema touchpoint_move. Move fills them and
// puts them in place, one table at a time:
//
//  1. A trigger on the table in use copies every change to its twin
//     from then on (installed under a short lock_timeout, retried).
//  2. Batches copy the rows that were there before, a range of pages
//     (ctid) at a time, each in its own transaction that also records how
//     far it got: stopped at any point, the next Move goes on from there.
//     Each batch locks its rows FOR SHARE, so a row cannot be deleted
//     between being read and being copied. The months a batch needs are
//     made first.
//  3. The swap, in one short transaction under lock_timeout (retried
//     until it gets its locks): the trigger goes, the foreign keys that
//     point at the old table go, the twin's sequences take over, and the
//     old table moves to the schema touchpoint_old and the twin (with its
//     partitions) into public. Statements prepared on the old table are
//     planned again against the new one.
//  4. The old table is dropped (under lock_timeout too).
//
// The code writes one shape of row to either table, so the service runs on
// throughout; no lock that stops accepts is held longer than LockTimeout
// (nor waited for longer), and rows are never lost: every change is either
// in a copied page or copied by the trigger.

// MoveOptions tune Move.
type MoveOptions struct {
	// Pages is how many pages (8 KiB) of the old table one batch copies
	// (0: 512, about 4,000 events).
	Pages int
	// LockTimeout bounds every wait for a lock that stops accepts: the
	// trigger's, the swap's, the drop's (0: 500 ms). A wait that times out
	// is tried again after RetryAfter.
	LockTimeout, RetryAfter time.Duration
	// Progress, when set, is told of every batch and swap.
	Progress func(Progress)
}

// Progress is how far the move of one table is.
type Progress struct {
	Table string
	// Pages of the old table copied, of Total (which grows while rows
	// are added; the trigger copies those).
	Pages, Total int64
	// Rows copied by batches so far.
	Rows int64
	// Waiting is set while a lock is not got, Swapped once the table is
	// in place.
	Waiting, Swapped bool
}

// moveOrder is the order tables are moved in: events first, so that a
// row of another table that does not carry its event's received_at yet
// finds it in the events table in use, whichever it is.
var moveOrder = []string{"events", "send_attempts", "mail_events", "mail_deliveries", "sms_deliveries", "outbox",
	"webhook_deliveries", "token_uses", "invite_rollup_slots"}

// eventMonth is the column of the rows kept by an event's id that holds
// the event's received_at; rows written before it existed lack it, and
// get it from their event.
const eventMonth = "event_received_at"

// moveLock lets one Move run at a time.
const moveLock = 0x746f75636e // "toucn"

// Waiting lists the tables still to be moved onto partitions.
func (s *Store) Waiting(ctx context.Context) ([]string, error) {
	var tables []string
	err := s.db.SelectContext(ctx, &tables, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'touchpoint_move' AND c.relkind = 'p' ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("tables to move: %w", pg.Translate(err))
	}
	slices.SortStableFunc(tables, func(a, b string) int { return order(a) - order(b) })
	return tables, nil
}

func order(table string) int {
	if i := slices.Index(moveOrder, table); i >= 0 {
		return i
	}
	return len(moveOrder)
}

// Move moves every table still waiting onto its partitioned twin (see
// above) and returns once all are in place, or with ctx's error: a later
// Move goes on where this one stopped.
func (s *Store) Move(ctx context.Context, o MoveOptions) error {
	if o.Pages <= 0 {
		o.Pages = 512
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = 500 * time.Millisecond
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = 2 * time.Second
	}
	if o.Progress == nil {
		o.Progress = func(Progress) {}
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return fmt.Errorf("move: %w", pg.Translate(err))
	}
	defer conn.Close()
	// A Move that was just stopped may hold the lock a moment longer,
	// until its session has ended.
	for tries := 0; ; tries++ {
		var got bool
		if err := conn.GetContext(ctx, &got, `SELECT pg_try_advisory_lock($1)`, moveLock); err != nil {
			return fmt.Errorf("move: %w", pg.Translate(err))
		}
		if got {
			break
		}
		if tries == 25 {
			return errors.New("move: another touchpoint migrate is moving the tables")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, moveLock) // closing releases it too

	tables, err := s.Waiting(ctx)
	if err != nil {
		return err
	}
	var moving bool
	if err := conn.GetContext(ctx, &moving, `SELECT to_regnamespace('touchpoint_move') IS NOT NULL`); err != nil || !moving {
		return pg.Translate(err)
	}
	if _, err := conn.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS touchpoint_old;
		CREATE TABLE IF NOT EXISTS touchpoint_move.moves (
			table_name text PRIMARY KEY,
			next_page bigint NOT NULL DEFAULT 0,
			rows bigint NOT NULL DEFAULT 0,
			copied_at timestamptz,
			swapped_at timestamptz)`); err != nil {
		return fmt.Errorf("move: %w", pg.Translate(err))
	}
	m := &mover{conn: conn, o: o}
	if err := m.months(ctx, tables); err != nil {
		return err
	}
	for _, t := range tables {
		if err := m.move(ctx, t); err != nil {
			if ctx.Err() != nil { // stopped: whatever the statement under way said
				err = ctx.Err()
			}
			return fmt.Errorf("move %s: %w", t, err)
		}
	}
	return m.finish(ctx)
}

// mover moves tables on one connection.
type mover struct {
	conn *sqlx.Conn
	o    MoveOptions
}

// shape is what the move of one table needs to know of it.
type shape struct {
	table   string
	columns []string // the twin's, in its order
	key     []string // the old table's primary key
	// from are the expressions that read each column from the old
	// table's row alias t (or NEW in the trigger).
	from func(row string) []string
}

func (m *mover) move(ctx context.Context, table string) error {
	sh, err := m.shape(ctx, table)
	if err != nil {
		return err
	}
	if _, err := m.conn.ExecContext(ctx, `INSERT INTO touchpoint_move.moves (table_name) VALUES ($1)
		ON CONFLICT DO NOTHING`, table); err != nil {
		return pg.Translate(err)
	}
	if err := m.mirror(ctx, sh); err != nil {
		return err
	}
	if err := m.copyRows(ctx, sh); err != nil {
		return err
	}
	if err := m.swap(ctx, sh); err != nil {
		return err
	}
	return m.withLockTimeout(ctx, table, func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, `DROP TABLE touchpoint_old.`+pq.QuoteIdentifier(table))
		return err
	})
}

// months makes the partitions of every month the tables to move hold a
// row of, before any is copied: the trigger copies a change of any row to
// its month. The rows kept by an event's id are of their event's month.
func (m *mover) months(ctx context.Context, tables []string) error {
	var since *time.Time
	for _, t := range tables {
		key, err := m.partitionKey(ctx, t)
		if err != nil {
			return err
		}
		var first *time.Time
		if err := m.conn.GetContext(ctx, &first, `SELECT min(`+pq.QuoteIdentifier(key)+`) FROM ONLY public.`+
			pq.QuoteIdentifier(t)); err != nil {
			return fmt.Errorf("first month of %s: %w", t, pg.Translate(err))
		}
		if first != nil && (since == nil || first.Before(*since)) {
			since = first
		}
	}
	if since == nil {
		return nil
	}
	return pg.EnsurePartitions(ctx, m.conn, *since, time.Now())
}

// shape reads the columns of the twin and the key of the old table, and
// refuses a pair whose columns differ (a later migration that changed
// one and not the other).
func (m *mover) shape(ctx context.Context, table string) (shape, error) {
	sh := shape{table: table}
	cols := func(schema string) ([]string, error) {
		var out []string
		err := m.conn.SelectContext(ctx, &out, `SELECT a.attname FROM pg_attribute a
			WHERE a.attrelid = to_regclass(quote_ident($1) || '.' || quote_ident($2)) AND a.attnum > 0 AND NOT a.attisdropped
			ORDER BY a.attnum`, schema, table)
		return out, pg.Translate(err)
	}
	twin, err := cols("touchpoint_move")
	if err != nil {
		return sh, err
	}
	old, err := cols("public")
	if err != nil {
		return sh, err
	}
	if a, b := slices.Sorted(slices.Values(twin)), slices.Sorted(slices.Values(old)); !slices.Equal(a, b) {
		return sh, fmt.Errorf("the columns of public.%s (%v) and of its partitioned twin (%v) differ: "+
			"a migration after the partitions changed one of them", table, old, twin)
	}
	if err := m.conn.SelectContext(ctx, &sh.key, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = to_regclass('public.' || quote_ident($1)) AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`,
		table); err != nil {
		return sh, pg.Translate(err)
	}
	if len(sh.key) == 0 {
		return sh, fmt.Errorf("public.%s has no primary key", table)
	}
	sh.columns = twin
	sh.from = func(row string) []string {
		out := make([]string, len(twin))
		for i, c := range twin {
			out[i] = row + "." + pq.QuoteIdentifier(c)
			if c == eventMonth && slices.Contains(twin, "event_id") {
				out[i] = `COALESCE(` + out[i] + `, (SELECT e.received_at FROM public.events e WHERE e.id = ` + row + `.event_id))`
			}
		}
		return out
	}
	return sh, nil
}

// mirror installs the trigger that copies every change of the old table
// to its twin.
func (m *mover) mirror(ctx context.Context, sh shape) error {
	var exists bool
	if err := m.conn.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_trigger
		WHERE tgrelid = to_regclass('public.' || quote_ident($1)) AND tgname = 'touchpoint_move_mirror')`, sh.table); err != nil {
		return pg.Translate(err)
	}
	if exists {
		return nil
	}
	twin := `touchpoint_move.` + pq.QuoteIdentifier(sh.table)
	quoted := make([]string, len(sh.columns))
	var set []string
	for i, c := range sh.columns {
		quoted[i] = pq.QuoteIdentifier(c)
		set = append(set, quoted[i]+` = EXCLUDED.`+quoted[i])
	}
	var match []string
	for _, k := range sh.key {
		match = append(match, pq.QuoteIdentifier(k)+` = OLD.`+pq.QuoteIdentifier(k))
	}
	fn := `touchpoint_move.` + pq.QuoteIdentifier("mirror_"+sh.table)
	body := `CREATE OR REPLACE FUNCTION ` + fn + `() RETURNS trigger LANGUAGE plpgsql AS $mirror$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM ` + twin + ` WHERE ` + strings.Join(match, ` AND `) + `;
    ELSE
        INSERT INTO ` + twin + ` (` + strings.Join(quoted, `, `) + `)
        VALUES (` + strings.Join(sh.from("NEW"), `, `) + `)
        ON CONFLICT ON CONSTRAINT ` + pq.QuoteIdentifier(sh.table+"_pkey") + ` DO UPDATE SET ` + strings.Join(set, `, `) + `;
    END IF;
    RETURN NULL;
END
$mirror$`
	if _, err := m.conn.ExecContext(ctx, body); err != nil {
		return fmt.Errorf("mirror: %w", pg.Translate(err))
	}
	return m.withLockTimeout(ctx, sh.table, func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TRIGGER touchpoint_move_mirror AFTER INSERT OR UPDATE OR DELETE ON public.`+
			pq.QuoteIdentifier(sh.table)+` FOR EACH ROW EXECUTE FUNCTION `+fn+`()`)
		return err
	})
}

// copyRows copies the old table's pages in batches from where the last
// batch stopped, until none is left.
func (m *mover) copyRows(ctx context.Context, sh shape) error {
	var st struct {
		Next int64 `db:"next_page"`
		Rows int64 `db:"rows"`
	}
	if err := m.conn.GetContext(ctx, &st, `SELECT next_page, rows FROM touchpoint_move.moves WHERE table_name = $1`,
		sh.table); err != nil {
		return pg.Translate(err)
	}
	old := `public.` + pq.QuoteIdentifier(sh.table)
	quoted := make([]string, len(sh.columns))
	for i, c := range sh.columns {
		quoted[i] = pq.QuoteIdentifier(c)
	}
	from := sh.from("t")
	key, err := m.partitionKey(ctx, sh.table)
	if err != nil {
		return err
	}
	keyExpr := from[slices.Index(sh.columns, key)]
	inRange := ` FROM ONLY ` + old + ` t WHERE t.ctid >= format('(%s,0)', $1::bigint)::tid AND t.ctid < format('(%s,0)', $2::bigint)::tid`
	for {
		var total int64
		if err := m.conn.GetContext(ctx, &total, `SELECT pg_relation_size($1::regclass) / current_setting('block_size')::bigint`,
			old); err != nil {
			return pg.Translate(err)
		}
		if st.Next >= total {
			m.o.Progress(Progress{Table: sh.table, Pages: total, Total: total, Rows: st.Rows})
			return nil
		}
		end := st.Next + int64(m.o.Pages)
		// The months of the batch first, in a transaction of their own:
		// making them takes locks the batch need not hold. A row added to
		// the pages meanwhile is of this month, which exists.
		var since, until *time.Time
		if err := m.conn.QueryRowxContext(ctx, `SELECT min(k), max(k) FROM (SELECT `+keyExpr+` AS k`+inRange+`) b`,
			st.Next, end).Scan(&since, &until); err != nil {
			return fmt.Errorf("months of pages from %d: %w", st.Next, pg.Translate(err))
		}
		if since != nil {
			if err := pg.EnsurePartitions(ctx, m.conn, *since, *until); err != nil {
				return err
			}
		}
		err := inTx(ctx, m.conn, func(tx *sqlx.Tx) error {
			res, err := tx.ExecContext(ctx, `INSERT INTO touchpoint_move.`+pq.QuoteIdentifier(sh.table)+
				` (`+strings.Join(quoted, `, `)+`) SELECT `+strings.Join(from, `, `)+inRange+
				` FOR SHARE OF t ON CONFLICT DO NOTHING`, st.Next, end)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			st.Next, st.Rows = end, st.Rows+n
			_, err = tx.ExecContext(ctx, `UPDATE touchpoint_move.moves SET next_page = $2, rows = $3 WHERE table_name = $1`,
				sh.table, st.Next, st.Rows)
			return err
		})
		if err != nil {
			return fmt.Errorf("copy pages from %d: %w", st.Next, pg.Translate(err))
		}
		m.o.Progress(Progress{Table: sh.table, Pages: min(st.Next, total), Total: total, Rows: st.Rows})
	}
}

// partitionKey is the column the twin is partitioned on.
func (m *mover) partitionKey(ctx context.Context, table string) (string, error) {
	var key string
	err := m.conn.GetContext(ctx, &key, `SELECT a.attname FROM pg_partitioned_table p
		JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
		WHERE p.partrelid = to_regclass('touchpoint_move.' || quote_ident($1))`, table)
	return key, pg.Translate(err)
}

// swap puts the twin in place of the old table in one short transaction.
func (m *mover) swap(ctx context.Context, sh shape) error {
	err := m.withLockTimeout(ctx, sh.table, func(tx *sqlx.Tx) error {
		old := `public.` + pq.QuoteIdentifier(sh.table)
		if _, err := tx.ExecContext(ctx, `LOCK TABLE `+old+` IN ACCESS EXCLUSIVE MODE`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DROP TRIGGER touchpoint_move_mirror ON `+old); err != nil {
			return err
		}
		// A foreign key to the old table would hold the new rows to it.
		var fks []struct {
			Table string `db:"tbl"`
			Name  string `db:"conname"`
		}
		if err := tx.SelectContext(ctx, &fks, `SELECT conrelid::regclass::text AS tbl, conname FROM pg_constraint
			WHERE contype = 'f' AND confrelid = $1::regclass AND conrelid <> confrelid`, old); err != nil {
			return err
		}
		for _, fk := range fks {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE `+fk.Table+` DROP CONSTRAINT `+pq.QuoteIdentifier(fk.Name)); err != nil {
				return err
			}
		}
		// The twin's sequences go on from the old table's.
		if _, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('touchpoint_move.' || quote_ident($1), a.attname),
				(SELECT last_value FROM pg_sequences s
				 WHERE format('%I.%I', s.schemaname, s.sequencename)::regclass = pg_get_serial_sequence('public.' || quote_ident($1), a.attname)::regclass))
			FROM pg_attribute a
			WHERE a.attrelid = to_regclass('touchpoint_move.' || quote_ident($1)) AND a.attnum > 0
			  AND pg_get_serial_sequence('touchpoint_move.' || quote_ident($1), a.attname) IS NOT NULL
			  AND pg_get_serial_sequence('public.' || quote_ident($1), a.attname) IS NOT NULL`, sh.table); err != nil {
			return err
		}
		var parts []string
		if err := tx.SelectContext(ctx, &parts, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
			WHERE i.inhparent = to_regclass('touchpoint_move.' || quote_ident($1))`, sh.table); err != nil {
			return err
		}
		stmts := []string{`ALTER TABLE ` + old + ` SET SCHEMA touchpoint_old`,
			`ALTER TABLE touchpoint_move.` + pq.QuoteIdentifier(sh.table) + ` SET SCHEMA public`}
		for _, p := range parts {
			stmts = append(stmts, `ALTER TABLE touchpoint_move.`+pq.QuoteIdentifier(p)+` SET SCHEMA public`)
		}
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE touchpoint_move.moves SET swapped_at = now() WHERE table_name = $1`, sh.table)
		return err
	})
	if err != nil {
		return fmt.Errorf("swap: %w", err)
	}
	m.o.Progress(Progress{Table: sh.table, Swapped: true})
	return nil
}

// finish catches up what the tables in place missed while they moved,
// and drops the schemas of the move.
func (m *mover) finish(ctx context.Context) error {
	// Reviews learn when their invite was sent from a trigger on the
	// partitioned events; an invite sent before the swap told no one.
	if _, err := m.conn.ExecContext(ctx, `UPDATE reviews r SET invited_at = e.sent_at FROM events e
		WHERE e.id = r.event_id AND r.invited_at IS NULL AND e.sent_at IS NOT NULL`); err != nil {
		return fmt.Errorf("move: reviews: %w", pg.Translate(err))
	}
	// An old table a stopped Move swapped out but did not drop.
	var old []string
	if err := m.conn.SelectContext(ctx, &old, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'touchpoint_old' AND c.relkind = 'r'`); err != nil {
		return pg.Translate(err)
	}
	for _, t := range old {
		if err := m.withLockTimeout(ctx, t, func(tx *sqlx.Tx) error {
			_, err := tx.ExecContext(ctx, `DROP TABLE touchpoint_old.`+pq.QuoteIdentifier(t))
			return err
		}); err != nil {
			return fmt.Errorf("move: drop the old %s: %w", t, err)
		}
	}
	var left int
	if err := m.conn.GetContext(ctx, &left, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN ('touchpoint_move', 'touchpoint_old') AND c.relkind IN ('r', 'p') AND c.relname <> 'moves'`); err != nil {
		return pg.Translate(err)
	}
	if left > 0 {
		return nil
	}
	_, err := m.conn.ExecContext(ctx, `DROP SCHEMA touchpoint_move CASCADE; DROP SCHEMA touchpoint_old CASCADE`)
	return pg.Translate(err)
}

// withLockTimeout runs fn in a transaction that waits at most LockTimeout
// for each lock, and runs it again after RetryAfter for as long as it
// times out, telling Progress it waits.
func (m *mover) withLockTimeout(ctx context.Context, table string, fn func(tx *sqlx.Tx) error) error {
	for {
		err := inTx(ctx, m.conn, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, m.o.LockTimeout.Milliseconds())); err != nil {
				return err
			}
			return fn(tx)
		})
		var pqErr *pq.Error
		if !errors.As(err, &pqErr) || pqErr.Code != "55P03" { // lock_not_available
			return pg.Translate(err)
		}
		m.o.Progress(Progress{Table: table, Waiting: true})
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(m.o.RetryAfter):
		}
	}
}

// inTx runs fn in a transaction on conn.
func inTx(ctx context.Context, conn *sqlx.Conn, fn func(tx *sqlx.Tx) error) error {
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback() // fn's error is the one to report
		return err
	}
	return tx.Commit()
}
