package testdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
)

// Copies lists every column of every table in db's public schema that
// holds text (text, varchar, json, jsonb, arrays of them) in which s
// appears, ignoring case, as "table.column" → number of rows. Tests of an
// erasure use it to prove that no copy of an address is left anywhere,
// including in tables added after the test was written.
func Copies(tb testing.TB, db *sqlx.DB, s string) map[string]int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cols []struct {
		Table  string `db:"table_name"`
		Column string `db:"column_name"`
	}
	err := db.SelectContext(ctx, &cols, `
		SELECT c.table_name, c.column_name FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
		  AND (c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb')
		       OR (c.data_type = 'ARRAY' AND c.udt_name IN ('_text', '_varchar', '_json', '_jsonb')))
		ORDER BY c.table_name, c.column_name`)
	if err != nil {
		tb.Fatalf("testdb: list text columns: %v", err)
	}
	if len(cols) == 0 {
		tb.Fatal("testdb: no text columns found: is the schema there?")
	}
	found := map[string]int{}
	for _, c := range cols {
		var n int
		q := fmt.Sprintf(`SELECT count(*) FROM %q WHERE strpos(lower(%q::text), lower($1)) > 0`, c.Table, c.Column)
		if err := db.GetContext(ctx, &n, q, s); err != nil {
			tb.Fatalf("testdb: search %s.%s: %v", c.Table, c.Column, err)
		}
		if n > 0 {
			found[c.Table+"."+c.Column] = n
		}
	}
	return found
}
