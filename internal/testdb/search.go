package testdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
)

// Column is a column of a table as the database's catalogue describes it.
type Column struct {
	Table string `db:"table_name"`
	Name  string `db:"column_name"`
	// Type is the type's name (its elements' for an array): text,
	// varchar, jsonb, bytea, …
	Type    string `db:"type_name"`
	Array   bool   `db:"is_array"`
	NotNull bool   `db:"not_null"`
}

// Columns lists every column that can hold text or bytes — of a string,
// user-defined (json, jsonb, bytea, uuid, …) or enum type, or an array of
// one — of every table in db's public schema, ordered by table and
// column. A partition is left out: its parent stands for it.
func Columns(tb testing.TB, db *sqlx.DB) []Column {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cols []Column
	err := db.SelectContext(ctx, &cols, `
		SELECT c.relname AS table_name, a.attname AS column_name, COALESCE(e.typname, t.typname) AS type_name,
		       e.oid IS NOT NULL AS is_array, a.attnotnull AS not_null
		FROM pg_attribute a
		JOIN pg_class c ON c.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_type t ON t.oid = a.atttypid
		LEFT JOIN pg_type e ON e.oid = t.typelem AND t.typcategory = 'A'
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
		  AND a.attnum > 0 AND NOT a.attisdropped
		  AND COALESCE(e.typcategory, t.typcategory) IN ('S', 'U', 'E')
		ORDER BY c.relname, a.attname`)
	if err != nil {
		tb.Fatalf("testdb: list columns: %v", err)
	}
	if len(cols) == 0 {
		tb.Fatal("testdb: no text columns found: is the schema there?")
	}
	return cols
}

// Copies lists every column of Columns in which s appears, as
// "table.column" → number of rows: ignoring case in text, JSON and
// arrays; in bytes, as its UTF-8 bytes or (ignoring case) where they are
// printable. Tests of an erasure use it to prove that no copy of a
// customer's value is left anywhere, including in tables added after the
// test was written.
func Copies(tb testing.TB, db *sqlx.DB, s string) map[string]int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	found := map[string]int{}
	for _, c := range Columns(tb, db) {
		match := fmt.Sprintf(`strpos(lower(%q::text), lower($1)) > 0`, c.Name)
		if c.Type == "bytea" && !c.Array {
			match = fmt.Sprintf(`(position(convert_to($1, 'UTF8') IN %[1]q) > 0
				OR strpos(lower(encode(%[1]q, 'escape')), lower($1)) > 0)`, c.Name)
		}
		var n int
		if err := db.GetContext(ctx, &n, fmt.Sprintf(`SELECT count(*) FROM %q WHERE %s`, c.Table, match), s); err != nil {
			tb.Fatalf("testdb: search %s.%s: %v", c.Table, c.Name, err)
		}
		if n > 0 {
			found[c.Table+"."+c.Name] = n
		}
	}
	return found
}
