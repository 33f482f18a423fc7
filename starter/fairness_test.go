package starter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/store/eventdb"
)

// TestSingleEventOvertakesABatchBacklog: while a large batch backlog is
// being started, a single POST /events gets its workflow within seconds
// (two batches of the starter), long before the backlog is done (a smaller scale of 100,000 events
// waiting).
func TestSingleEventOvertakesABatchBacklog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const backlog = 1000
	for b := range backlog / 500 {
		batch := make([]eventdb.NewEvent, 500)
		for i := range batch {
			email := fmt.Sprintf("backfill-%d-%d@example.com", b, i)
			batch[i] = eventdb.NewEvent{AccountID: e.accountID, Type: e.typeName, ChannelID: e.channelID,
				CustomerEmail: email, TransactionReference: fmt.Sprintf("order-%d-%d", b, i),
				TransactionDate: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
				Payload:         json.RawMessage(fmt.Sprintf(`{"customer":{"email":%q}}`, email))}
		}
		out, err := e.st.Events.AcceptEvents(ctx, batch)
		require.NoError(t, err)
		for _, o := range out {
			require.NoError(t, o.Err)
		}
	}
	s := e.starter(e.temporal)
	s.BatchSize, s.Concurrency = 50, 4
	run(t, s.Run)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		pending, _, err := e.st.Events.OutboxBacklog(ctx)
		require.NoError(c, err)
		assert.Less(c, pending, backlog, "the drain has begun")
	}, time.Minute, 10*time.Millisecond)

	single := e.accept(t, 1)
	begin := time.Now()
	// What proves the overtaking is the backlog still waiting once the
	// single event is started, not the clock: the bound only ends a
	// test that fails, and leaves room for a machine shared with others.
	e.waitDone(t, single, 30*time.Second)
	took := time.Since(begin)
	pending, _, err := e.st.Events.OutboxBacklog(ctx)
	require.NoError(t, err)
	t.Logf("the single event's workflow started %v after its accept, with %d batch events still waiting", took.Round(time.Millisecond), pending)
	assert.Positive(t, pending, "the single event did not wait for the backlog")

	e.waitDone(t, e.outboxEventIDs(t), 3*time.Minute)
	assert.Empty(t, e.logs.warnings())
}

// outboxEventIDs are the events of every outbox row.
func (e *env) outboxEventIDs(t *testing.T) []string {
	var ids []string
	for _, r := range e.rows(t) {
		ids = append(ids, r.EventID)
	}
	return ids
}
