package main

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/schema"
)

// TestMigratePartitionMovesAnOldInstallation: migrate on an installation
// made before the monthly partitions says which tables wait, and
// migrate --partition moves them, saying how far it got.
func TestMigratePartitionMovesAnOldInstallation(t *testing.T) {
	t.Parallel()
	url := testdb.NewURL(t)
	db, err := sqlx.Open("postgres", url)
	require.NoError(t, err)
	defer db.Close()
	_, err = schema.MigrateTo(context.Background(), db, 31)
	require.NoError(t, err)
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	_, err = db.Exec(`INSERT INTO events (id, account_id, event_type_id, channel_id, received_at, type, customer_email,
		transaction_reference, transaction_date, payload, invite_setting_id, delay, delay_from, updated_at)
		VALUES ('evt-' || gen_random_uuid(), $1, $2, $3, $4, 'order', 'ann@example.com', 'T-1', $4, '{}', $5, 'PT0S', 'event', $4)`,
		a.AccountID, a.EventTypeID, a.ChannelID, time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC), a.SettingID)
	require.NoError(t, err)
	vars := map[string]string{"DATABASE_URL": url}

	out, err := runCLI(t, vars, "migrate", "--schema-only")
	require.NoError(t, err)
	assert.Contains(t, out, "applied 0032_monthly_partitions.sql")
	assert.Contains(t, out, "9 tables wait to be moved onto monthly partitions (events, send_attempts,")
	assert.Contains(t, out, "run touchpoint migrate --partition")

	out, err = runCLI(t, vars, "migrate", "--schema-only", "--partition")
	require.NoError(t, err)
	assert.Contains(t, out, "events: 100% (1 rows copied)")
	assert.Contains(t, out, "events: moved onto monthly partitions")
	assert.Contains(t, out, "invite_rollup_slots: moved onto monthly partitions")
	var month string
	require.NoError(t, db.Get(&month, `SELECT tableoid::regclass::text FROM events`))
	assert.Equal(t, "events_2026_08", month)

	out, err = runCLI(t, vars, "migrate", "--schema-only", "--partition")
	require.NoError(t, err)
	assert.Equal(t, "schema is up to date\n", out)
}
