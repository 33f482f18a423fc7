// Package testdb gives tests a fresh, migrated PostgreSQL database of
// their own on the server at TOUCHPOINT_TEST_DATABASE_URL (default: the
// local server), dropped when the test ends.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the driver

	"github.com/touchpoint/touchpoint/schema"
)

// ServerURL is the maintenance database of the test server.
func ServerURL() string {
	if u := os.Getenv("TOUCHPOINT_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9_]+`)

// NewURL creates an empty database named after the test and returns its
// URL; the database is dropped in tb.Cleanup.
func NewURL(tb testing.TB) string {
	tb.Helper()
	suffix := make([]byte, 6)
	rand.Read(suffix)
	name := unsafeChars.ReplaceAllString(strings.ToLower(tb.Name()), "_")
	if len(name) > 40 {
		name = name[:40]
	}
	name = "tp_test_" + name + "_" + hex.EncodeToString(suffix)

	admin, err := sqlx.Open("postgres", ServerURL())
	if err != nil {
		tb.Fatalf("testdb: open %s: %v", ServerURL(), err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		tb.Fatalf("testdb: create database: %v", err)
	}
	tb.Cleanup(func() {
		admin, err := sqlx.Open("postgres", ServerURL())
		if err != nil {
			tb.Errorf("testdb: open for drop: %v", err)
			return
		}
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			tb.Errorf("testdb: drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(ServerURL())
	if err != nil {
		tb.Fatalf("testdb: parse server URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// New creates a fresh database, applies every migration and returns an
// open pool that is closed before the database is dropped.
func New(tb testing.TB) *sqlx.DB {
	tb.Helper()
	dsn := NewURL(tb)
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		tb.Fatalf("testdb: open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := schema.Migrate(ctx, db); err != nil {
		tb.Fatalf("testdb: migrate: %v", err)
	}
	return db
}

// URL is the URL of db's database on the test server, for a second pool
// or one through a proxy.
func URL(tb testing.TB, db *sqlx.DB) string {
	tb.Helper()
	var name string
	if err := db.Get(&name, `SELECT current_database()`); err != nil {
		tb.Fatalf("testdb: current database: %v", err)
	}
	u, err := url.Parse(ServerURL())
	if err != nil {
		tb.Fatalf("testdb: parse server URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}
