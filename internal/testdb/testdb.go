// Package testdb gives tests a fresh, migrated PostgreSQL database of
// their own on the server at TOUCHPOINT_TEST_DATABASE_URL (default: the
// local server), dropped when the test ends.
//
// # The connection budget
//
// The whole suite shares one server, which allows 100 connections by
// default. `go test` runs at most two test binaries at once on two cores
// (-p defaults to GOMAXPROCS), and each runs at most two tests at once
// (-parallel likewise; a serial test runs alone), so at most four tests
// hold connections at a time. A pool holds as many connections as it
// ever had work for at once (idle ones stay open), so what bounds a test
// is the caps of its pools:
//
//   - a pool of New: MaxConns;
//   - a touchpoint process the test starts, in process or as a child:
//     ProcessMaxConns (TOUCHPOINT_DB_MAX_CONNS);
//   - a Temporal server on PostgreSQL (internal/testtemporal): at most 16
//     (four services, two stores, two connections each);
//   - a pool a test opens itself for fixtures: the few its one goroutine
//     uses, one or two.
//
// The heaviest tests start the production topology (e2e: auth, two APIs
// and two workers, Temporal on PostgreSQL) — 5×4 + 16 + 4 + 2 = 42, and
// e2e runs them one at a time — or two touchpoint processes with two pools
// of their own (bench, cmd/touchpoint: 2×4 + 2×4 + 2 = 18). The worst
// case is one topology beside three of the others, 42 + 3×18 = 96; in
// practice a topology's binary runs its other tests after it, so beside
// another binary's two: 42 + 2×18 = 78, and creating and dropping a
// database takes one connection more for a moment per test. Raise a cap
// here only with the sum.
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
	"github.com/touchpoint/touchpoint/store/pg"
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

// MaxConns caps each pool New opens, and ProcessMaxConns the pool of each
// touchpoint process a test starts (TOUCHPOINT_DB_MAX_CONNS): see the
// connection budget above.
const (
	MaxConns        = 4
	ProcessMaxConns = 4
)

// New creates a fresh database, applies every migration and returns an
// open pool of at most MaxConns connections that is closed before the
// database is dropped.
func New(tb testing.TB) *sqlx.DB {
	tb.Helper()
	dsn := NewURL(tb)
	db, err := pg.NewPool(dsn) // as Touchpoint's own pools, with their session's settings
	if err != nil {
		tb.Fatalf("testdb: open: %v", err)
	}
	db.SetMaxOpenConns(MaxConns)
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
