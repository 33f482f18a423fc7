package pg

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// Footprint is what a database holds and what its server has written so
// far, read from the catalogue and the statistics, for the capacity
// model of `touchpoint bench --capacity`: two readings apart tell what
// the work between them cost. It names no table of ours.
type Footprint struct {
	// Tables are the database's tables (a partition counts as its
	// parent), by name.
	Tables []TableFootprint
	// Inserted, Updated and Deleted are the rows the database's
	// transactions have written since its statistics began
	// (pg_stat_database).
	Inserted int64 `db:"tup_inserted"`
	Updated  int64 `db:"tup_updated"`
	Deleted  int64 `db:"tup_deleted"`
	// WALBytes is the server's WAL position in bytes: all of its
	// databases write to the one WAL.
	WALBytes int64 `db:"wal_bytes"`
}

// TableFootprint is one table's live rows (as the statistics count them)
// and its bytes on disk: the table with its TOAST, and its indexes.
type TableFootprint struct {
	Table      string `db:"table_name"`
	Rows       int64  `db:"rows"`
	TableBytes int64  `db:"table_bytes"`
	IndexBytes int64  `db:"index_bytes"`
}

// ReadFootprint reads db's footprint. The statistics lag the work by up
// to the time a busy server process takes to report them (PostgreSQL 15:
// 1 s when active, 10 s when idle); read after the work has settled.
func ReadFootprint(ctx context.Context, db *sqlx.DB) (Footprint, error) {
	var f Footprint
	err := db.GetContext(ctx, &f, `SELECT d.tup_inserted, d.tup_updated, d.tup_deleted,
			pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS wal_bytes
		FROM pg_stat_database d WHERE d.datname = current_database()`)
	if err != nil {
		return f, fmt.Errorf("read the database's statistics: %w", Translate(err))
	}
	err = db.SelectContext(ctx, &f.Tables, `SELECT COALESCE(p.relname, s.relname) AS table_name,
			sum(s.n_live_tup)::bigint AS rows,
			sum(pg_table_size(s.relid))::bigint AS table_bytes,
			sum(pg_indexes_size(s.relid))::bigint AS index_bytes
		FROM pg_stat_user_tables s
		LEFT JOIN pg_inherits i ON i.inhrelid = s.relid
		LEFT JOIN pg_class p ON p.oid = i.inhparent
		WHERE s.schemaname = 'public'
		GROUP BY 1 ORDER BY 1`)
	if err != nil {
		return f, fmt.Errorf("read the tables' sizes: %w", Translate(err))
	}
	return f, nil
}
