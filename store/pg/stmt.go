package pg

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"

	"github.com/jmoiron/sqlx"
)

// Stmt is a statement prepared on first use and kept: running it is one
// round trip (bind, execute) where an unprepared query with arguments is
// two (parse and describe, then bind and execute), and PostgreSQL can
// reuse its plan. database/sql prepares it again on each connection it
// runs on, including replacements for lost ones.
type Stmt struct {
	db    *sqlx.DB
	query string
	stmt  atomic.Pointer[sqlx.Stmt]
}

// NewStmt is query, to be prepared on db when it first runs.
func NewStmt(db *sqlx.DB, query string) *Stmt { return &Stmt{db: db, query: query} }

// Ready reports whether the statement has been prepared on the pool.
func (p *Stmt) Ready() bool { return p.stmt.Load() != nil }

// Prepare returns the statement, preparing it if no call has yet. Nobody
// waits on a lock while another caller talks to PostgreSQL: callers that
// race to prepare it each do, and all but the first close theirs.
func (p *Stmt) Prepare(ctx context.Context) (*sqlx.Stmt, error) {
	if stmt := p.stmt.Load(); stmt != nil {
		return stmt, nil
	}
	stmt, err := p.db.PreparexContext(ctx, p.query)
	if err != nil {
		return nil, err
	}
	if !p.stmt.CompareAndSwap(nil, stmt) {
		stmt.Close()
	}
	return p.stmt.Load(), nil
}

// On returns the statement ready to run in tx, or on the pool when tx is
// nil. In a transaction database/sql reuses the statement prepared on the
// transaction's connection, preparing it there first if it must.
//
// Preparing a statement for the pool takes a pool connection, so a
// transaction never does it: holding one connection while waiting for
// another, enough concurrent transactions would empty the pool and wait
// on each other until they time out. Callers Prepare their statements
// before they begin (PrepareAll); one that is not ready yet is prepared
// for this transaction alone.
func (p *Stmt) On(ctx context.Context, tx *sqlx.Tx) (*sqlx.Stmt, error) {
	if tx == nil {
		return p.Prepare(ctx)
	}
	if stmt := p.stmt.Load(); stmt != nil {
		return tx.StmtxContext(ctx, stmt), nil
	}
	return tx.PreparexContext(ctx, p.query)
}

// Get runs the statement for one row into dest, in tx or, when tx is nil,
// on the pool.
func (p *Stmt) Get(ctx context.Context, tx *sqlx.Tx, dest any, args ...any) error {
	stmt, err := p.On(ctx, tx)
	if err != nil {
		return err
	}
	return stmt.GetContext(ctx, dest, args...)
}

// Select runs the statement for all rows into dest, as Get.
func (p *Stmt) Select(ctx context.Context, tx *sqlx.Tx, dest any, args ...any) error {
	stmt, err := p.On(ctx, tx)
	if err != nil {
		return err
	}
	return stmt.SelectContext(ctx, dest, args...)
}

// Exec runs the statement for no rows, as Get.
func (p *Stmt) Exec(ctx context.Context, tx *sqlx.Tx, args ...any) error {
	stmt, err := p.On(ctx, tx)
	if err != nil {
		return err
	}
	_, err = stmt.ExecContext(ctx, args...)
	return err
}

// PrepareAll makes statements that run inside transactions ready before
// one begins (see On).
func PrepareAll(ctx context.Context, stmts ...*Stmt) error {
	for _, p := range stmts {
		if _, err := p.Prepare(ctx); err != nil {
			return err
		}
	}
	return nil
}

// maxStatements bounds a Statements: each statement is prepared on every
// connection it runs on, and a plan over every monthly partition takes
// PostgreSQL's memory per connection.
const maxStatements = 32

// Statements keeps a Stmt per query text, for reads whose text is built
// from a request's filters (a list's WHERE): a small set of texts that
// repeat. PostgreSQL plans a statement's first runs with their values,
// then, when that costs no less, keeps one generic plan per connection.
// That is the point for a read over every monthly partition, whose
// planning costs more than its run: no filter names the month, so a plan
// with the values prunes nothing that the generic plan's start does not.
// Past maxStatements texts, a query runs unprepared.
type Statements struct {
	db     *sqlx.DB
	mu     sync.Mutex
	byText map[string]*Stmt
}

// NewStatements is the statements of db, none prepared yet.
func NewStatements(db *sqlx.DB) *Statements {
	return &Statements{db: db, byText: map[string]*Stmt{}}
}

// stmt returns the statement of query; nil when the set is full.
func (c *Statements) stmt(query string) *Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.byText[query]; ok {
		return s
	}
	if len(c.byText) >= maxStatements {
		return nil
	}
	s := NewStmt(c.db, query)
	c.byText[query] = s
	return s
}

// Len is how many query texts have a statement.
func (c *Statements) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byText)
}

// prepared is a Queryer that runs each query as one of its Statements.
type prepared struct{ stmts *Statements }

func (p prepared) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	s := p.stmts.stmt(query)
	if s == nil {
		return p.stmts.db.GetContext(ctx, dest, query, args...)
	}
	return s.Get(ctx, nil, dest, args...)
}

func (p prepared) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	s := p.stmts.stmt(query)
	if s == nil {
		return p.stmts.db.SelectContext(ctx, dest, query, args...)
	}
	return s.Select(ctx, nil, dest, args...)
}

func (p prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s := p.stmts.stmt(query)
	if s == nil {
		return p.stmts.db.QueryContext(ctx, query, args...)
	}
	stmt, err := s.Prepare(ctx)
	if err != nil {
		return nil, err
	}
	return stmt.QueryContext(ctx, args...)
}

func (p prepared) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	s := p.stmts.stmt(query)
	if s == nil {
		return p.stmts.db.QueryxContext(ctx, query, args...)
	}
	stmt, err := s.Prepare(ctx)
	if err != nil {
		return nil, err
	}
	return stmt.QueryxContext(ctx, args...)
}

// QueryRowxContext prepares on the pool's statement as the others do; an
// error in preparing comes with Scan.
func (p prepared) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	s := p.stmts.stmt(query)
	if s == nil {
		return p.stmts.db.QueryRowxContext(ctx, query, args...)
	}
	stmt, err := s.Prepare(ctx)
	if err != nil {
		return p.stmts.db.QueryRowxContext(ctx, query, args...)
	}
	return stmt.QueryRowxContext(ctx, args...)
}
