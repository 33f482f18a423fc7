package eventdb_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

func TestScratchTables(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	base := pg.NewDB(db)
	st := eventdb.New(base, accountdb.New(base, ""))

	ins, err := st.CreateInsertScratch(ctx, "bench_insert_x")
	require.NoError(t, err)
	require.NoError(t, ins.Insert(ctx, "evt-1", time.Now(), []byte(`{"a":1}`)))
	require.Error(t, ins.Insert(ctx, "evt-1", time.Now(), []byte(`{}`)), "a primary key, as events have")
	var n int
	require.NoError(t, db.Get(&n, `SELECT count(*) FROM bench_insert_x`))
	assert.Equal(t, 1, n)
	require.NoError(t, ins.Drop(ctx))

	cp, err := st.CreateEventsScratch(ctx, "bench_copy_x")
	require.NoError(t, err)
	day := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	events := []eventdb.NewEvent{
		{AccountID: "acc-1", Type: "order", ChannelID: "chl-1", CustomerEmail: "a@example.com", TransactionReference: "o-1",
			TransactionDate: time.Now(), Payload: json.RawMessage(`{"x":1}`)},
		{AccountID: "acc-1", Type: "order", ChannelID: "chl-1", CustomerEmail: "b@example.com", CustomerReference: "c-2",
			TransactionReference: "o-2", TransactionDate: time.Now(), EstimatedDeliveryDate: &day, Payload: json.RawMessage(`{"x":2}`)},
	}
	require.NoError(t, cp.Copy(ctx, events))
	require.NoError(t, cp.Copy(ctx, events), "new ids each time")
	require.NoError(t, db.Get(&n, `SELECT count(*) FROM bench_copy_x WHERE invite_status = 'pending'`))
	assert.Equal(t, 4, n, "the events table's defaults")
	var indexes int
	require.NoError(t, db.Get(&indexes, `SELECT count(*) FROM pg_indexes WHERE tablename = 'bench_copy_x'`))
	assert.Greater(t, indexes, 5, "the events table's indexes")
	require.NoError(t, cp.Drop(ctx))
}
