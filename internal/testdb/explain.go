package testdb

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/store/pg"
)

// Explainer is a pool of one connection to a test database on which
// auto_explain reports, measured (ANALYZE, BUFFERS, nested statements),
// the plan of every statement run while it is on: benchmarks log the
// plans of what they time. One connection, so that the session's
// settings (Touchpoint's own, pg.SessionSettings, and auto_explain's)
// hold for every statement.
type Explainer struct {
	DB *sqlx.DB
	mu sync.Mutex
	b  strings.Builder
}

// NewExplainer opens an Explainer on db, off.
func NewExplainer(tb testing.TB, db *sqlx.DB) *Explainer {
	tb.Helper()
	e := &Explainer{}
	connector, err := pq.NewConnector(URL(tb, db))
	if err != nil {
		tb.Fatal(err)
	}
	e.DB = sqlx.NewDb(sql.OpenDB(pq.ConnectorWithNoticeHandler(connector, e.notice)), "postgres")
	e.DB.SetMaxOpenConns(1)
	e.DB.SetMaxIdleConns(1)
	tb.Cleanup(func() { e.DB.Close() })
	for _, q := range []string{pg.SessionSettings, `LOAD 'auto_explain'`, `SET auto_explain.log_level = 'notice'`, `SET client_min_messages = 'notice'`,
		`SET auto_explain.log_analyze = on`, `SET auto_explain.log_buffers = on`, `SET auto_explain.log_nested_statements = on`,
		`SET auto_explain.log_min_duration = -1`} {
		if _, err := e.DB.ExecContext(context.Background(), q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	return e
}

// Explain turns the plans on or off, and forgets those reported so far.
func (e *Explainer) Explain(tb testing.TB, on bool) {
	tb.Helper()
	d := -1
	if on {
		d = 0
	}
	if _, err := e.DB.ExecContext(context.Background(), `SET auto_explain.log_min_duration = `+strconv.Itoa(d)); err != nil {
		tb.Fatal(err)
	}
	e.Take()
}

// Take returns the plans reported since the last Take, and forgets them.
func (e *Explainer) Take() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.b.String()
	e.b.Reset()
	return s
}

func (e *Explainer) notice(n *pq.Error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.b.WriteString(n.Message)
	e.b.WriteString("\n")
}

// Rows is how many rows a benchmark at scale seeds: def, or the count in
// the environment variable env (at least least), for a quick run.
func Rows(tb testing.TB, env string, def, least int) int {
	tb.Helper()
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < least {
		tb.Fatalf("%s=%q: want a count of at least %d", env, v, least)
	}
	return n
}
