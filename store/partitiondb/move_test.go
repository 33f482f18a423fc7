package partitiondb_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/store/partitiondb"
)

// lastUnpartitioned is the last migration of the schema before the
// partitions.
const lastUnpartitioned = 31

// seedStart is the first month the rows of an old installation are of.
var seedStart = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)

// oldInstall is a database as the release before the partitions left it,
// with n events over three months and rows of every table that moves,
// then migrated: its tables wait in touchpoint_move.
func oldInstall(t testing.TB, n int) (*sqlx.DB, *eventfixture.Account) {
	t.Helper()
	db, err := sqlx.Open("postgres", testdb.NewURL(t))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	_, err = schema.MigrateTo(ctx, db, lastUnpartitioned)
	require.NoError(t, err)
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	seed(t, db, a, 1, n)
	_, err = schema.Migrate(ctx, db)
	require.NoError(t, err)
	return db, a
}

// seed writes events first..last of a with rows of every table that
// moves, as the release before wrote them (random UUIDv4 ids, no
// event_received_at).
func seed(t testing.TB, db *sqlx.DB, a *eventfixture.Account, first, last int) {
	t.Helper()
	stmts := []string{
		`INSERT INTO events (id, account_id, event_type_id, channel_id, received_at, type, customer_email, customer_reference,
			transaction_reference, transaction_date, payload, invite_setting_id, delay, delay_from, invite_status, sent_at, updated_at)
		SELECT 'evt-' || gen_random_uuid(), $1, $2, $3, at, 'order', 'c' || i || '@example.com', 'C-' || i, 'T-' || i, at,
			jsonb_build_object('customer', jsonb_build_object('email', 'c' || i || '@example.com', 'firstName', 'Ann', 'lastName', 'Lee' || i)),
			$4, 'PT0S', 'event', CASE WHEN i % 10 = 0 THEN 'scheduled' ELSE 'sent' END,
			CASE WHEN i % 10 = 0 THEN NULL ELSE at + interval '1 minute' END, at
		FROM generate_series($5::int, $6::int) i, LATERAL (SELECT $7::timestamptz + (i % 3) * interval '1 month' + i * interval '1 second' AS at) t`,
		`INSERT INTO send_attempts (event_id, kind, n, medium, started_at, finished_at, outcome)
		SELECT id, 'invite', 1, 'email', sent_at, sent_at, 'sent' FROM events WHERE sent_at IS NOT NULL AND customer_reference IN
			(SELECT 'C-' || i FROM generate_series($5::int, $6::int) i)`,
		`INSERT INTO outbox (event_id, created_at, next_attempt_at, done_at)
		SELECT id, received_at, received_at, received_at FROM events WHERE customer_reference IN (SELECT 'C-' || i FROM generate_series($5::int, $6::int) i)`,
		`INSERT INTO mail_events (provider, provider_id, event_id, account_id, message, outcome, occurred_at, received_at)
		SELECT 'ses', 'p-' || id, id, account_id, 'invite', 'delivered', sent_at, sent_at FROM events
		WHERE sent_at IS NOT NULL AND customer_reference IN (SELECT 'C-' || i FROM generate_series($5::int, $6::int) i WHERE i % 5 = 0)`,
		`INSERT INTO mail_deliveries (event_id, message, status, provider, at, updated_at)
		SELECT id, 'invite', 'delivered', 'ses', sent_at, sent_at FROM events
		WHERE sent_at IS NOT NULL AND customer_reference IN (SELECT 'C-' || i FROM generate_series($5::int, $6::int) i WHERE i % 5 = 0)`,
		`INSERT INTO sms_deliveries (message_sid, event_id, message, status, created_at, updated_at)
		SELECT 'SM' || substr(md5(id), 1, 16), id, 'invite', 'delivered', sent_at, sent_at FROM events
		WHERE sent_at IS NOT NULL AND customer_reference IN (SELECT 'C-' || i FROM generate_series($5::int, $6::int) i WHERE i % 7 = 0)`,
		`INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created_at, updated_at)
		VALUES ('whk-' || $1, $1, 'https://hooks.example.com', '{invite.sent}', '\x00', $7, $7) ON CONFLICT DO NOTHING`,
		`INSERT INTO webhook_deliveries (id, endpoint_id, account_id, type, payload, status, created_at, next_start_at, event_id)
		SELECT 'msg-' || gen_random_uuid(), 'whk-' || account_id, account_id, 'invite.sent', '{}', 'succeeded', received_at, received_at, id
		FROM events WHERE customer_reference IN (SELECT 'C-' || i FROM generate_series($5::int, $6::int) i WHERE i % 10 = 1)`,
		`INSERT INTO idempotency_keys (account_id, key, request_hash, event_id, created_at, expires_at)
		SELECT account_id, 'k-' || id, '\x00', id, received_at, now() + interval '1 day' FROM events
		WHERE customer_reference IN (SELECT 'C-' || i FROM generate_series($5::int, $6::int) i WHERE i % 10 = 2)`,
		`INSERT INTO invite_rollup_slots (account_id, event_type_id, channel_id, locale, medium, slot, accepted)
		SELECT $1, '', '', '', '', date_trunc('hour', received_at), count(*) FROM events
		WHERE customer_reference IN (SELECT 'C-' || i FROM generate_series($5::int, $6::int) i)
		GROUP BY date_trunc('hour', received_at) ON CONFLICT DO NOTHING`,
		`INSERT INTO token_uses (jti, last_used_at, expires_at)
		SELECT 'jti-' || i, now(), now() + interval '1 hour' FROM generate_series($5::int, $6::int) i WHERE i % 100 = 0`,
		`INSERT INTO reviews (id, account_id, event_id, event_type_id, channel_id, rating, comment, locale, show_name, created_at, updated_at)
		SELECT 'rev-' || gen_random_uuid(), account_id, id, event_type_id, channel_id, 4, 'fine', 'en', true, sent_at, sent_at FROM events
		WHERE sent_at IS NOT NULL AND customer_reference IN (SELECT 'C-' || i FROM generate_series($5::int, $6::int) i WHERE i % 20 = 1)`,
	}
	// Every statement names each argument's type.
	const args = `WITH args AS (SELECT $1::text, $2::text, $3::text, $4::text, $5::int, $6::int, $7::timestamptz) `
	for _, q := range stmts {
		_, err := db.Exec(args+q, a.AccountID, a.EventTypeID, a.ChannelID, a.SettingID, first, last, seedStart)
		require.NoError(t, err, q)
	}
}

// counts are the rows of each table that moves.
func counts(t testing.TB, db *sqlx.DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"events", "send_attempts", "outbox", "mail_events", "mail_deliveries", "sms_deliveries",
		"webhook_deliveries", "idempotency_keys", "invite_rollup_slots", "token_uses", "reviews"} {
		var n int
		require.NoError(t, db.Get(&n, `SELECT count(*) FROM `+table))
		out[table] = n
	}
	return out
}

// catalogue describes what a schema is made of, one line a thing, for
// comparing two databases: tables and their columns, indexes,
// constraints, triggers, partition keys, sequences, functions and schemas.
// Partitions are left out but for how many of each table there are, and
// that their indexes are those of their table.
func catalogue(t testing.TB, db *sqlx.DB) []string {
	t.Helper()
	var lines []string
	require.NoError(t, db.Select(&lines, `
		WITH rel AS (
			SELECT c.oid, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'S', 'v', 'm') AND NOT c.relispartition)
		SELECT format('relation %s %s', relname, relkind) FROM rel
		UNION ALL SELECT format('column %s.%s #%s %s not null %s default %s', r.relname, a.attname, a.attnum,
			format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
			FROM rel r JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
			LEFT JOIN pg_attrdef d ON d.adrelid = r.oid AND d.adnum = a.attnum
		UNION ALL SELECT format('index %s', pg_get_indexdef(i.indexrelid)) FROM rel r JOIN pg_index i ON i.indrelid = r.oid
		UNION ALL SELECT format('constraint %s.%s %s', r.relname, c.conname, pg_get_constraintdef(c.oid))
			FROM rel r JOIN pg_constraint c ON c.conrelid = r.oid
		UNION ALL SELECT format('trigger %s', pg_get_triggerdef(g.oid)) FROM rel r JOIN pg_trigger g ON g.tgrelid = r.oid
			WHERE NOT g.tgisinternal
		UNION ALL SELECT format('partitioned %s %s', r.relname, pg_get_partkeydef(r.oid)) FROM rel r WHERE r.relkind = 'p'
		UNION ALL SELECT format('function %s(%s)', p.proname, pg_get_function_identity_arguments(p.oid))
			FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
		UNION ALL SELECT format('schema %s', nspname) FROM pg_namespace
			WHERE nspname NOT LIKE 'pg\_%' AND nspname <> 'information_schema'
		UNION ALL SELECT format('partitions of %s carry its indexes: %s', r.relname, bool_and(
			(SELECT count(*) FROM pg_index pi JOIN pg_inherits x ON x.inhrelid = pi.indexrelid
			 WHERE pi.indrelid = c.inhrelid AND x.inhparent IN (SELECT indexrelid FROM pg_index WHERE indrelid = r.oid))
			= (SELECT count(*) FROM pg_index WHERE indrelid = r.oid)))
			FROM rel r JOIN pg_inherits c ON c.inhparent = r.oid WHERE r.relkind = 'p' GROUP BY r.relname
		ORDER BY 1`))
	return lines
}

// TestMoveEndsAsAFreshInstall moves an installation of the release
// before onto partitions and finds the same tables, columns, indexes,
// constraints and triggers as a fresh installation, and every row.
func TestMoveEndsAsAFreshInstall(t *testing.T) {
	t.Parallel()
	db, _ := oldInstall(t, 3000)
	before := counts(t, db)
	require.Equal(t, 3000, before["events"])
	s := store.New(db, "P7D").Partitions
	ctx := context.Background()
	waiting, err := s.Waiting(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"events", "send_attempts", "mail_events", "mail_deliveries", "sms_deliveries", "outbox",
		"webhook_deliveries", "token_uses", "invite_rollup_slots"}, waiting)

	var last partitiondb.Progress
	require.NoError(t, s.Move(ctx, partitiondb.MoveOptions{Pages: 64, Progress: func(p partitiondb.Progress) {
		if p.Table == "events" && !p.Swapped {
			assert.GreaterOrEqual(t, p.Pages, last.Pages, "progress only goes forward")
			last = p
		}
	}}))
	assert.Equal(t, int64(3000), last.Rows)
	assert.Equal(t, last.Total, last.Pages)
	waiting, err = s.Waiting(ctx)
	require.NoError(t, err)
	assert.Empty(t, waiting)

	assert.Equal(t, before, counts(t, db), "every row moved")
	moved := catalogue(t, db)
	assert.Contains(t, moved, "partitioned events RANGE (received_at)")
	assert.Contains(t, moved, "partitions of send_attempts carry its indexes: t")
	assert.Equal(t, catalogue(t, testdb.New(t)), moved)

	// Each row is in its event's month, and reviews keep what their
	// public page shows.
	var misplaced int
	require.NoError(t, db.Get(&misplaced, `SELECT count(*) FROM send_attempts a JOIN events e ON e.id = a.event_id
		WHERE a.event_received_at <> e.received_at`))
	assert.Zero(t, misplaced)
	require.NoError(t, db.Get(&misplaced, `SELECT count(*) FROM reviews r JOIN events e ON e.id = r.event_id
		WHERE r.transaction_date IS DISTINCT FROM e.transaction_date OR r.invited_at IS DISTINCT FROM e.sent_at
		   OR r.author_last_name IS DISTINCT FROM e.payload #>> '{customer,lastName}'`))
	assert.Zero(t, misplaced)
	var months int
	require.NoError(t, db.Get(&months, `SELECT count(DISTINCT tableoid) FROM events`))
	assert.Equal(t, 3, months)

	// Moving again finds nothing to do.
	require.NoError(t, s.Move(ctx, partitiondb.MoveOptions{}))
}

// TestMoveWhileAcceptsRun moves an installation while events are accepted,
// invites change and finished outbox rows are deleted, and finds every
// row as it ended: nothing lost, nothing twice, no accept refused.
func TestMoveWhileAcceptsRun(t *testing.T) {
	t.Parallel()
	db, a := oldInstall(t, 20000)
	st := store.New(db, "P7D")
	s := st.Partitions
	ctx := context.Background()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var accepted sync.Map
	var acceptErrs, deleted atomic.Int64
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				acc, err := st.Events.AcceptEvent(ctx, eventdb.NewEvent{AccountID: a.AccountID, Type: "order", ChannelID: a.ChannelID,
					CustomerEmail: "new@example.com", TransactionReference: fmt.Sprint("N-", i), TransactionDate: time.Now(),
					Payload: []byte(`{"customer":{"email":"new@example.com"}}`)})
				if err != nil {
					acceptErrs.Add(1)
					t.Errorf("accept: %v", err)
					return
				}
				accepted.Store(acc.EventID, true)
			}
		}()
	}
	// Invites of the old rows go on changing, and finished start orders
	// are deleted, as workers and housekeeping do.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 10; ; i += 10 {
			select {
			case <-stop:
				return
			default:
			}
			res, err := db.Exec(`WITH sent AS (
					UPDATE events SET invite_status = 'sent', sent_at = now() WHERE customer_reference = $1 RETURNING 1)
				DELETE FROM outbox WHERE event_id = (SELECT id FROM events WHERE customer_reference = $2)`,
				fmt.Sprint("C-", i), fmt.Sprint("C-", i+1))
			if err != nil {
				t.Errorf("change: %v", err)
				return
			}
			n, err := res.RowsAffected()
			if err != nil {
				t.Errorf("change: %v", err)
				return
			}
			deleted.Add(n)
		}
	}()

	require.NoError(t, s.Move(ctx, partitiondb.MoveOptions{Pages: 128, LockTimeout: 200 * time.Millisecond,
		RetryAfter: 50 * time.Millisecond}))
	close(stop)
	wg.Wait()
	require.Zero(t, acceptErrs.Load())

	var ids []string
	accepted.Range(func(k, _ any) bool { ids = append(ids, k.(string)); return true })
	require.NotEmpty(t, ids)
	var found int
	require.NoError(t, db.Get(&found, `SELECT count(*) FROM events WHERE id = ANY($1)`, pq.Array(ids)))
	assert.Equal(t, len(ids), found, "every accepted event, once")
	var n int
	require.NoError(t, db.Get(&n, `SELECT count(*) FROM events WHERE customer_reference LIKE 'C-%'`))
	assert.Equal(t, 20000, n)
	require.NoError(t, db.Get(&n, `SELECT count(*) FROM (SELECT id FROM events GROUP BY id HAVING count(*) > 1) d`))
	assert.Zero(t, n, "no event twice")
	require.NoError(t, db.Get(&n, `SELECT count(*) FROM events WHERE customer_reference LIKE 'C-%' AND invite_status = 'scheduled'`))
	var changed int
	require.NoError(t, db.Get(&changed, `SELECT count(*) FROM events WHERE customer_reference LIKE 'C-%' AND sent_at > $1`,
		seedStart.AddDate(0, 4, 0)))
	assert.Equal(t, 2000, n+changed, "an invite changed during the move is as it was changed")
	require.NoError(t, db.Get(&n, `SELECT count(*) FROM outbox o JOIN events e ON e.id = o.event_id
		WHERE e.customer_reference LIKE 'C-%'`))
	require.Positive(t, deleted.Load())
	assert.Equal(t, 20000-int(deleted.Load()), n, "a deleted start order stays deleted")
	require.NoError(t, db.Get(&n, `SELECT count(*) FROM outbox o WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = o.event_id)`))
	assert.Zero(t, n)
}

// TestMoveStopsAndGoesOn stops a move half way and finishes it with
// another.
func TestMoveStopsAndGoesOn(t *testing.T) {
	t.Parallel()
	db, _ := oldInstall(t, 3000)
	before := counts(t, db)
	s := store.New(db, "P7D").Partitions
	ctx, cancel := context.WithCancel(context.Background())
	var stoppedAt partitiondb.Progress
	err := s.Move(ctx, partitiondb.MoveOptions{Pages: 32, Progress: func(p partitiondb.Progress) {
		if p.Table == "events" && p.Pages > 0 && stoppedAt.Pages == 0 {
			stoppedAt = p
			cancel()
		}
	}})
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
	require.Positive(t, stoppedAt.Rows)
	require.Less(t, stoppedAt.Pages, stoppedAt.Total)

	var first partitiondb.Progress
	require.NoError(t, s.Move(context.Background(), partitiondb.MoveOptions{Pages: 32, Progress: func(p partitiondb.Progress) {
		if first.Table == "" {
			first = p
		}
	}}))
	assert.Equal(t, "events", first.Table)
	assert.Greater(t, first.Pages, stoppedAt.Pages, "it goes on from the last batch")
	assert.Equal(t, before, counts(t, db))
}

// TestMoveWaitsForLocksWithoutStoppingAccepts: a long transaction that
// reads events keeps the swap from its lock; the move gives up its wait
// after LockTimeout again and again, and accepts go on meanwhile rather
// than queueing behind it.
func TestMoveWaitsForLocksWithoutStoppingAccepts(t *testing.T) {
	t.Parallel()
	db, a := oldInstall(t, 200)
	st := store.New(db, "P7D")
	s := st.Partitions
	ctx := context.Background()

	reader, err := db.Beginx()
	require.NoError(t, err)
	defer reader.Rollback()
	_, err = reader.Exec(`SELECT count(*) FROM events`)
	require.NoError(t, err)

	waits := make(chan struct{}, 100)
	done := make(chan error, 1)
	go func() {
		done <- s.Move(ctx, partitiondb.MoveOptions{LockTimeout: 100 * time.Millisecond, RetryAfter: 20 * time.Millisecond,
			Progress: func(p partitiondb.Progress) {
				if p.Table == "events" && p.Waiting {
					select {
					case waits <- struct{}{}:
					default:
					}
				}
			}})
	}()
	<-waits // the swap waits for the reader
	for i := range 20 {
		_, err := st.Events.AcceptEvent(ctx, eventdb.NewEvent{AccountID: a.AccountID, Type: "order", ChannelID: a.ChannelID,
			CustomerEmail: "new@example.com", TransactionReference: fmt.Sprint("W-", i), TransactionDate: time.Now(),
			Payload: []byte(`{"customer":{"email":"new@example.com"}}`)})
		require.NoError(t, err)
	}
	<-waits // and still waits: the accepts went through beside it
	select {
	case err := <-done:
		t.Fatalf("the move ended while the reader held events: %v", err)
	default:
	}
	require.NoError(t, reader.Rollback())
	require.NoError(t, <-done)
	var n int
	require.NoError(t, db.Get(&n, `SELECT count(*) FROM events WHERE transaction_reference LIKE 'W-%'`))
	assert.Equal(t, 20, n)
}
