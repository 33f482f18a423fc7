// Package pg is what every repository of the store shares: the pool and
// its clock, the one translation of PostgreSQL errors into the sentinels
// callers branch on, the transaction helper, statements prepared once,
// IDs, and keyset paging. It knows no table of its own.
package pg

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

var (
	// ErrNotFound: no row, or a row of another account.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a unique business key is already taken.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable: PostgreSQL could not be reached or could not commit.
	ErrUnavailable = errors.New("database unavailable")
	// ErrNoDatabase: the server answers, but the database of the URL does
	// not exist (it is made by hand in production, by `touchpoint dev`
	// in development).
	ErrNoDatabase = errors.New("database does not exist")
)

// DB is the pool every repository shares, with the clock they stamp rows
// with: one clock, so that a test that sets it sets every repository's.
type DB struct {
	pool    *sqlx.DB
	stmts   *Statements             // the reads of ReadPlanned on the primary
	replica atomic.Pointer[Replica] // nil: every read on the primary (see Read)
	now     func() time.Time
}

// NewDB wraps an open pool, with the wall clock.
func NewDB(pool *sqlx.DB) *DB { return &DB{pool: pool, stmts: NewStatements(pool), now: time.Now} }

// Pool is the connection pool.
func (d *DB) Pool() *sqlx.DB { return d.pool }

// Now is the clock truncated to the milliseconds that every timestamp is
// returned with, so keyset cursors compare exactly.
func (d *DB) Now() time.Time { return d.now().UTC().Truncate(time.Millisecond) }

// SetClock replaces the clock (tests). A test's clock may show any month,
// while the migrations and housekeeping make the monthly partitions of the
// months around the wall clock: the partitions of the month the clock shows
// now and of the month before and after it are made here. A test that moves
// its clock further makes the partitions it needs (EnsurePartitions). It
// panics when they cannot be made: it is for tests only.
func (d *DB) SetClock(now func() time.Time) {
	d.now = now
	t := d.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := EnsurePartitions(ctx, d.pool, t.AddDate(0, -1, 0), t.AddDate(0, 1, 0)); err != nil {
		panic(fmt.Sprintf("pg: set clock: %v", err))
	}
}

// EnsurePartitions makes the monthly partitions of every partitioned table
// for the months from since's to until's that do not have them yet.
func EnsurePartitions(ctx context.Context, db sqlx.ExecerContext, since, until time.Time) error {
	if _, err := db.ExecContext(ctx, `SELECT touchpoint_ensure_partitions($1, $2)`, since, until); err != nil {
		return fmt.Errorf("make monthly partitions: %w", Translate(err))
	}
	return nil
}

// DefaultMaxConns is the most PostgreSQL connections a process keeps by
// default (TOUCHPOINT_DB_MAX_CONNS).
const DefaultMaxConns = 32

// Open connects to PostgreSQL with a pool of DefaultMaxConns connections
// and checks the connection.
func Open(ctx context.Context, url string) (*sqlx.DB, error) {
	return OpenPool(ctx, url, DefaultMaxConns)
}

// OpenPool is Open with a pool of at most maxConns connections.
func OpenPool(ctx context.Context, url string, maxConns int) (*sqlx.DB, error) {
	db, err := newPool(url, maxConns)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database: %w", Translate(err))
	}
	return db, nil
}

// newPool is a pool of at most maxConns connections to url, not yet
// connected.
func newPool(url string, maxConns int) (*sqlx.DB, error) {
	db, err := NewPool(url)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db, nil
}

// NewPool is a pool of connections to url, not yet connected, each of
// which starts with the session's settings (SessionSettings). Every pool
// of Touchpoint's, and of its tests, is made here.
func NewPool(url string) (*sqlx.DB, error) {
	c, err := pq.NewConnector(url)
	if err != nil {
		return nil, err
	}
	return sqlx.NewDb(sql.OpenDB(settingsConnector{c}), "postgres"), nil
}

// SessionSettings are set on every connection as it is made.
//
// jit = off: the statements are short keyset reads and writes, but the
// planner's estimate of the event list, with its subqueries per row over
// every monthly partition, passes jit_above_cost, and compiling it took
// 300 ms of a list that runs in 8 (auto_explain in
// BenchmarkPartitionsAtScale). Set on the session rather than in the
// connection's startup packet, which connection poolers refuse.
const SessionSettings = `SET jit = off`

// settingsConnector makes connections with SessionSettings applied.
type settingsConnector struct{ driver.Connector }

func (c settingsConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.(driver.ExecerContext).ExecContext(ctx, SessionSettings, nil); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// NewID returns prefix + "-" + a random lowercase UUID.
func NewID(prefix string) string { return prefix + "-" + uuid.NewString() }

// NewTimeID returns prefix + "-" + a lowercase UUIDv7 whose timestamp is
// t's millisecond and whose other 74 bits are random. A row partitioned by
// month on the same t is then the only one that can hold its id in its
// month, so a primary key of (id, t) keeps the id unique in the whole
// table; and the month of a row is known from its id (IDTime).
// touchpoint_uuid7 in the schema makes the same ids in SQL.
func NewTimeID(prefix string, t time.Time) string {
	u := uuid.New() // version 4: random, with the RFC 9562 variant
	ms := uint64(t.UnixMilli())
	for i := 0; i < 6; i++ {
		u[i] = byte(ms >> (40 - 8*i))
	}
	u[6] = u[6]&0x0f | 0x70 // version 7
	return prefix + "-" + u.String()
}

// IDTime is the millisecond an id of NewTimeID was made for, and false
// for an id that is not a UUIDv7 (ids made before there were any).
func IDTime(id string) (time.Time, bool) {
	_, s, ok := strings.Cut(id, "-")
	u, err := uuid.Parse(s)
	if !ok || err != nil || u.Version() != 7 {
		return time.Time{}, false
	}
	var ms int64
	for _, b := range u[:6] {
		ms = ms<<8 | int64(b)
	}
	return time.UnixMilli(ms).UTC(), true
}

// ValidID reports whether id is prefix-<uuid> in canonical lowercase form;
// anything else in a path is answered 404 without a query.
func ValidID(prefix, id string) bool {
	if len(id) != len(prefix)+1+36 || id[:len(prefix)+1] != prefix+"-" {
		return false
	}
	u, err := uuid.Parse(id[len(prefix)+1:])
	return err == nil && u.String() == id[len(prefix)+1:]
}

// Translate maps driver errors to the sentinels callers branch on. It is
// the only reader of pq's error codes but for the few a repository
// answers itself (a time zone PostgreSQL does not know).
func Translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err.Error() == "sql: database is closed" { // database/sql has no sentinel for it
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		switch {
		case pqErr.Code == "23505": // unique_violation
			return fmt.Errorf("%w: %s", ErrConflict, pqErr.Constraint)
		case pqErr.Code == "3D000": // invalid_catalog_name
			return fmt.Errorf("%w: %v", ErrNoDatabase, err)
		case pqErr.Code.Class() == "08", // connection exception
			pqErr.Code.Class() == "53", // insufficient resources
			pqErr.Code.Class() == "57": // operator intervention (shutdown, cancel)
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		return err
	}
	var netErr net.Error
	if errors.As(err, &netErr) || slices.ContainsFunc(unreachable, func(e error) bool { return errors.Is(err, e) }) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return err
}

// unreachable are the errors, besides a net.Error, that mean PostgreSQL
// could not be reached or stopped answering. A connection lost
// mid-conversation ends its stream (EOF) when the server side went first.
var unreachable = []error{io.EOF, io.ErrUnexpectedEOF, driver.ErrBadConn, sql.ErrConnDone,
	pq.ErrSSLNotSupported, context.DeadlineExceeded}

// InTx runs fn in a transaction on db and commits it, translating errors.
// A change that writes the rows of several repositories runs in one: each
// takes the tx (their …Tx functions).
func InTx(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return Translate(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback() // the fn error is the one to report
		return Translate(err)
	}
	return Translate(tx.Commit())
}

// MaxDetail bounds a stored detail of a send or a report (an attempt's,
// a provider report's, a failed test's); providers' answers are short.
const MaxDetail = 2000

// Truncate cuts s to at most n bytes, on a character boundary: the most
// of an error text a row keeps.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// TranslateOr is Translate(err), or fallback when err is nil: the answer
// to a statement that failed or changed nothing.
func TranslateOr(err, fallback error) error {
	if err != nil {
		return Translate(err)
	}
	return fallback
}
