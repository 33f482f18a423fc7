// Package store is the one place that speaks SQL: sqlx repositories for
// Touchpoint's resources, with PostgreSQL errors turned into the sentinels
// below so callers can branch without knowing pq.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
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

// Store holds the connection pool and the defaults new rows need.
type Store struct {
	db *sqlx.DB
	// DefaultInviteDelay is the delay of automatically created invite
	// settings (P7D; PT10S in `touchpoint dev`).
	DefaultInviteDelay string
	// Quotas are the limits of an account without its own (set with
	// SetAccountQuotas). The zero value limits nothing: `touchpoint`
	// sets the configured defaults (TOUCHPOINT_DAILY_SEND_QUOTA, …).
	Quotas Quotas
	// OnQuotaExceeded, when set, is told of every refusal by a quota, by
	// kind (QuotaDailySends, QuotaRecipient, QuotaChannels,
	// QuotaEventTypes): the process's metrics count them.
	OnQuotaExceeded func(kind string)
	// now is the clock; tests replace it.
	now func() time.Time
	// accepts groups concurrent AcceptEvent calls into one commit.
	accepts acceptQueue
	// The statements every event or invite runs are prepared once (see
	// preparedStmt).
	acceptStmt, acceptBatchStmt, acceptManyStmt preparedStmt
	invite                                      *inviteStatements
	webhooks                                    *webhookStatements
}

// New wraps an open pool.
func New(db *sqlx.DB, defaultInviteDelay string) *Store {
	return &Store{db: db, DefaultInviteDelay: defaultInviteDelay, now: time.Now,
		acceptStmt: preparedStmt{query: acceptSQL}, acceptBatchStmt: preparedStmt{query: acceptBatchSQL},
		acceptManyStmt: preparedStmt{query: acceptManySQL},
		invite:         newInviteStatements(), webhooks: newWebhookStatements()}
}

// preparedStmt is a statement prepared on first use and kept: running it
// is one round trip (bind, execute) where an unprepared query with
// arguments is two (parse and describe, then bind and execute), and
// PostgreSQL can reuse its plan. database/sql prepares it again on each
// connection it runs on, including replacements for lost ones.
type preparedStmt struct {
	query string
	stmt  atomic.Pointer[sqlx.Stmt]
}

// get returns the statement, preparing it if no call has yet. Nobody
// waits on a lock while another caller talks to PostgreSQL: callers that
// race to prepare it each do, and all but the first close theirs.
func (p *preparedStmt) get(ctx context.Context, db *sqlx.DB) (*sqlx.Stmt, error) {
	if stmt := p.stmt.Load(); stmt != nil {
		return stmt, nil
	}
	stmt, err := db.PreparexContext(ctx, p.query)
	if err != nil {
		return nil, err
	}
	if !p.stmt.CompareAndSwap(nil, stmt) {
		stmt.Close()
	}
	return p.stmt.Load(), nil
}

// on returns the statement ready to run in tx, or on the pool when tx is
// nil. In a transaction database/sql reuses the statement prepared on the
// transaction's connection, preparing it there first if it must.
//
// Preparing a statement for the pool takes a pool connection, so a
// transaction never does it: holding one connection while waiting for
// another, enough concurrent transactions would empty the pool and wait
// on each other until they time out. Callers get their statements before
// they begin; one that is not ready yet is prepared for this transaction
// alone.
func (p *preparedStmt) on(ctx context.Context, db *sqlx.DB, tx *sqlx.Tx) (*sqlx.Stmt, error) {
	if tx == nil {
		return p.get(ctx, db)
	}
	if stmt := p.stmt.Load(); stmt != nil {
		return tx.StmtxContext(ctx, stmt), nil
	}
	return tx.PreparexContext(ctx, p.query)
}

// getPrepared runs p for one row into dest, in tx or, when tx is nil, on
// the pool.
func (s *Store) getPrepared(ctx context.Context, tx *sqlx.Tx, p *preparedStmt, dest any, args ...any) error {
	stmt, err := p.on(ctx, s.db, tx)
	if err != nil {
		return err
	}
	return stmt.GetContext(ctx, dest, args...)
}

// selectPrepared runs p for all rows into dest, as getPrepared.
func (s *Store) selectPrepared(ctx context.Context, tx *sqlx.Tx, p *preparedStmt, dest any, args ...any) error {
	stmt, err := p.on(ctx, s.db, tx)
	if err != nil {
		return err
	}
	return stmt.SelectContext(ctx, dest, args...)
}

// execPrepared runs p for no rows, as getPrepared.
func (s *Store) execPrepared(ctx context.Context, tx *sqlx.Tx, p *preparedStmt, args ...any) error {
	stmt, err := p.on(ctx, s.db, tx)
	if err != nil {
		return err
	}
	_, err = stmt.ExecContext(ctx, args...)
	return err
}

// DB exposes the pool to the few callers that need a raw handle
// (migrations, health checks).
func (s *Store) DB() *sqlx.DB { return s.db }

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
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database: %w", translate(err))
	}
	return db, nil
}

// Now is the store's clock truncated to the milliseconds that every
// timestamp is returned with, so keyset cursors compare exactly.
func (s *Store) Now() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// SetClock replaces the clock (tests).
func (s *Store) SetClock(now func() time.Time) { s.now = now }

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

// translate maps driver errors to the sentinels callers branch on.
func translate(err error) error {
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

// inTx runs fn in a transaction and commits it, translating errors.
func (s *Store) inTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return translate(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback() // the fn error is the one to report
		return translate(err)
	}
	return translate(tx.Commit())
}
