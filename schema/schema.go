// Package schema holds Touchpoint's PostgreSQL schema as numbered SQL
// migrations, the few data migrations written in Go (a change of stored
// values that needs a rule of the Go code), and the runner that applies
// them.
package schema

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
)

//go:embed *.sql
var files embed.FS

// lockKey is the advisory lock that serialises concurrent migrators
// ("touchpoint migrate" in two containers, several test packages).
const lockKey = 0x746f756368 // "touch"

// Migration is one numbered .sql file, or a data migration in Go.
type Migration struct {
	Version int
	Name    string
	SQL     string
	// Go, for a data migration, runs in the migration's transaction; its
	// note, if any, is told with the migration's name.
	Go func(ctx context.Context, tx *sqlx.Tx) (note string, err error)
}

// goMigrations are the data migrations in Go, numbered among the files.
var goMigrations = []Migration{
	{Version: 30, Name: "0030_clean_stored_text", Go: cleanStoredText},
}

// Migrations returns the embedded migrations in version order.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: name must start with a positive number and '_'", e.Name())
		}
		body, err := files.ReadFile(e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: e.Name(), SQL: string(body)})
	}
	ms = append(ms, goMigrations...)
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migrations %q and %q share version %d", ms[i-1].Name, ms[i].Name, ms[i].Version)
		}
	}
	return ms, nil
}

// Migrate applies every migration not yet recorded in schema_migrations,
// each in its own transaction, and returns the names it applied, each
// with what its data migration said, if anything. It holds
// a session advisory lock for the whole run, so concurrent callers apply
// each migration exactly once.
func Migrate(ctx context.Context, db *sqlx.DB) ([]string, error) {
	return MigrateTo(ctx, db, math.MaxInt)
}

// MigrateTo is Migrate up to and including version: a test of a data
// migration stores rows as the schema before it had them.
func MigrateTo(ctx context.Context, db *sqlx.DB, version int) ([]string, error) {
	ms, err := Migrations()
	if err != nil {
		return nil, err
	}
	// The advisory lock belongs to one session: keep one connection.
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, lockKey); err != nil {
		return nil, fmt.Errorf("migrate: lock: %w", err)
	}
	// Unlock with a fresh context: the caller's may be cancelled by now.
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockKey) // closing the session releases it too

	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	var done []int
	if err := conn.SelectContext(ctx, &done, `SELECT version FROM schema_migrations`); err != nil {
		return nil, fmt.Errorf("migrate: read applied versions: %w", err)
	}
	applied := make(map[int]bool, len(done))
	for _, v := range done {
		applied[v] = true
	}
	var names []string
	for _, m := range ms {
		if applied[m.Version] || m.Version > version {
			continue
		}
		tx, err := conn.BeginTxx(ctx, nil)
		if err != nil {
			return names, fmt.Errorf("migrate %s: begin: %w", m.Name, err)
		}
		note := ""
		if m.Go != nil {
			note, err = m.Go(ctx, tx)
		} else {
			_, err = tx.ExecContext(ctx, m.SQL)
		}
		if err != nil {
			tx.Rollback() // the migration's error is the one to report
			return names, fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			tx.Rollback() // the insert error is the one to report
			return names, fmt.Errorf("migrate %s: record: %w", m.Name, err)
		}
		if err := tx.Commit(); err != nil {
			return names, fmt.Errorf("migrate %s: commit: %w", m.Name, err)
		}
		if note != "" {
			note = " (" + note + ")"
		}
		names = append(names, m.Name+note)
	}
	return names, nil
}
