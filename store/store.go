// Package store builds Touchpoint's repositories — a package under store/
// for each aggregate, the one place that speaks SQL of its tables, with
// PostgreSQL errors turned into the sentinels of package pg so callers can
// branch without knowing pq — on one pool and one clock (New), and keeps
// what spans them all: a customer's erasure from every table that can hold
// their data, and the housekeeping of the small tables that expire row by
// row.
package store

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/authdb"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/partitiondb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/reportdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/store/statsdb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// The sentinels callers branch on, and the base every repository shares,
// are package pg's; these names keep the callers of the store as they are.
var (
	ErrNotFound    = pg.ErrNotFound
	ErrConflict    = pg.ErrConflict
	ErrUnavailable = pg.ErrUnavailable
	ErrNoDatabase  = pg.ErrNoDatabase
	ErrBadCursor   = pg.ErrBadCursor
)

type (
	// Page asks for one page of a list, newest first.
	Page = pg.Page
	// Cursor is a keyset position.
	Cursor = pg.Cursor
	// StartBatch is a set of claimed rows whose workflows are due to start.
	StartBatch[T any] = pg.StartBatch[T]
	// StartRetry is a row whose workflow start failed.
	StartRetry = pg.StartRetry
)

// DefaultMaxConns is the most PostgreSQL connections a process keeps by
// default (TOUCHPOINT_DB_MAX_CONNS).
const DefaultMaxConns = pg.DefaultMaxConns

// Open, OpenPool, NewID, NewTimeID, ValidID, DecodeCursor, DatabaseURL,
// EnsureDatabase, DropDatabase and EnsurePartitions are package pg's.
var (
	Open           = pg.Open
	OpenPool       = pg.OpenPool
	NewID          = pg.NewID
	NewTimeID      = pg.NewTimeID
	ValidID        = pg.ValidID
	DecodeCursor   = pg.DecodeCursor
	DatabaseURL    = pg.DatabaseURL
	EnsureDatabase = pg.EnsureDatabase
	DropDatabase   = pg.DropDatabase
	// EnsurePartitions is for tests whose rows are of months far from
	// the wall clock and the store's (see SetClock).
	EnsurePartitions = pg.EnsurePartitions
)

// Store holds the connection pool and the defaults new rows need.
type Store struct {
	base *pg.DB
	db   *sqlx.DB
	// The repositories of the aggregates that have packages of their own,
	// on the same pool and clock.
	Auth     *authdb.Store
	Accounts *accountdb.Store
	Stats    *statsdb.Store
	Events   *eventdb.Store
	Webhooks *webhookdb.Store
	// Reviews keeps the reviews and what is published of them.
	Reviews *reviewdb.Store
	// Templates keeps the shop's templates and their test sends.
	Templates *templatedb.Store
	// Suppressions keeps the suppression list.
	Suppressions *suppressiondb.Store
	// Reports keeps what the mail and SMS providers report.
	Reports *reportdb.Store
	// Partitions keeps the monthly partitions (housekeeping).
	Partitions *partitiondb.Store
	// Invites keeps the invite of each event, its reminder and their
	// attempts.
	Invites *invitedb.Store
}

// New wraps an open pool.
func New(db *sqlx.DB, defaultInviteDelay string) *Store {
	base := pg.NewDB(db)
	stats := statsdb.New(base)
	accounts := accountdb.New(base, defaultInviteDelay)
	webhooks := webhookdb.New(base, accounts)
	suppressions := suppressiondb.New(base, stats, webhooks)
	return &Store{base: base, db: db, Auth: authdb.New(base), Accounts: accounts, Stats: stats,
		Events: eventdb.New(base, accounts), Webhooks: webhooks, Reviews: reviewdb.New(base, webhooks, stats), Partitions: partitiondb.New(base),
		Templates: templatedb.New(base, accounts), Suppressions: suppressions,
		Reports: reportdb.New(base, stats, webhooks, suppressions),
		Invites: invitedb.New(base, stats, accounts, suppressions, webhooks)}
}

// DB exposes the pool to the few callers that need a raw handle
// (migrations, health checks).
func (s *Store) DB() *sqlx.DB { return s.db }

// UseReplica lets the reads that may be a little behind — public reads,
// stats and lists — go to the streaming replica r, in the requests its
// Reads marks (see package pg).
func (s *Store) UseReplica(r *pg.Replica) { s.base.UseReplica(r) }

// Now is the store's clock truncated to the milliseconds that every
// timestamp is returned with, so keyset cursors compare exactly.
func (s *Store) Now() time.Time { return s.base.Now() }

// SetClock replaces the clock (tests).
func (s *Store) SetClock(now func() time.Time) { s.base.SetClock(now) }

// inTx runs fn in a transaction and commits it, translating errors.
func (s *Store) inTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	return pg.InTx(ctx, s.db, fn)
}
