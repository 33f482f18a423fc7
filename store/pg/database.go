package pg

// Databases for tools that set up their own PostgreSQL: `touchpoint dev`
// creates its database, `touchpoint bench` creates and drops a temporary
// one.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// DatabaseURL is serverURL (any PostgreSQL URL) naming the database name
// instead of its own.
func DatabaseURL(serverURL, name string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", fmt.Errorf("database URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// databaseName is the database a URL names.
func databaseName(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("database URL: %w", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return "", errors.New("the database URL names no database")
	}
	return name, nil
}

// openMaintenance opens the server's "postgres" database, from which
// others are created and dropped.
func openMaintenance(serverURL string) (*sqlx.DB, error) {
	admin, err := DatabaseURL(serverURL, "postgres")
	if err != nil {
		return nil, err
	}
	return sqlx.Open("postgres", admin)
}

// EnsureDatabase creates the database named in dsn when it is missing,
// by connecting to the server's "postgres" database, so that `touchpoint
// dev` runs against an empty server. A database created meanwhile by
// another process (two devs, parallel tests) counts as created.
func EnsureDatabase(ctx context.Context, dsn string) error {
	name, err := databaseName(dsn)
	if err != nil {
		return err
	}
	db, err := openMaintenance(dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	var exists bool
	if err := db.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name); err != nil {
		return fmt.Errorf("check database %q: %w", name, Translate(err))
	}
	if exists {
		return nil
	}
	if _, err := db.ExecContext(ctx, `CREATE DATABASE `+pq.QuoteIdentifier(name)); err != nil {
		var pqErr *pq.Error
		if errors.As(err, &pqErr) && pqErr.Code == "42P04" { // duplicate_database: created meanwhile
			return nil
		}
		return fmt.Errorf("create database %q: %w", name, Translate(err))
	}
	return nil
}

// DropDatabase drops the database name on the server of serverURL, if it
// exists, ending the sessions still connected to it.
func DropDatabase(ctx context.Context, serverURL, name string) error {
	db, err := openMaintenance(serverURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `DROP DATABASE IF EXISTS `+pq.QuoteIdentifier(name)+` WITH (FORCE)`); err != nil {
		return fmt.Errorf("drop database %q: %w", name, Translate(err))
	}
	return nil
}
