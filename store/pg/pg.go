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
	replica atomic.Pointer[Replica] // nil: every read on the primary (see Read)
	now     func() time.Time
}

// NewDB wraps an open pool, with the wall clock.
func NewDB(pool *sqlx.DB) *DB { return &DB{pool: pool, now: time.Now} }

// Pool is the connection pool.
func (d *DB) Pool() *sqlx.DB { return d.pool }

// Now is the clock truncated to the milliseconds that every timestamp is
// returned with, so keyset cursors compare exactly.
func (d *DB) Now() time.Time { return d.now().UTC().Truncate(time.Millisecond) }

// SetClock replaces the clock (tests).
func (d *DB) SetClock(now func() time.Time) { d.now = now }

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
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db, nil
}

// NewID returns prefix + "-" + a random lowercase UUID.
func NewID(prefix string) string { return prefix + "-" + uuid.NewString() }

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

// Truncate cuts s to at most n bytes, on a character boundary: the most
// of an error text a row keeps.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
