package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/bench/capacity"
	"github.com/touchpoint/touchpoint/internal/testbin"
	"github.com/touchpoint/touchpoint/internal/testdb"
)

// TestCapacityOnDev runs the capacity mix with tiny numbers against a
// `touchpoint dev` it starts itself — the real binary — and checks what it
// measured and the document it wrote.
func TestCapacityOnDev(t *testing.T) {
	t.Parallel()
	doc := filepath.Join(t.TempDir(), "capacity.md")
	o, err := ParseFlags([]string{"--capacity", "--events", "12", "--concurrency", "4", "--reminder", "PT2S",
		"--review-share", "0.25", "--capacity-doc", doc},
		func(k string) string { return map[string]string{"DATABASE_URL": testdb.ServerURL()}[k] }, &bytes.Buffer{})
	require.NoError(t, err)
	o.Executable = testbin.Touchpoint(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	m, err := Capacity(ctx, o)
	require.NoError(t, err)
	t.Logf("measured: %+v", *m)

	assert.Equal(t, capacity.Mix{Invites: 12, ReminderSet: 4, Reviews: 3, Reminders: m.Mix.Reminders, Reports: 12 + m.Mix.Reminders,
		Deliveries: m.Mix.Deliveries, Endpoints: 1, Concurrency: 4}, m.Mix)
	// Every fourth invite is reviewed, one of the four with a reminder
	// among them: its reminder is cancelled when the review comes before
	// it is due (on a loaded machine it may not).
	assert.Contains(t, []int{3, 4}, m.Mix.Reminders, "the reminders not cancelled by a review")
	// Each invite is scheduled, sent and delivered; a review, a reminder.
	assert.GreaterOrEqual(t, m.Mix.Deliveries, 3*12+3+3)
	tables := map[string]capacity.TableCost{}
	for _, tc := range m.Tables {
		tables[tc.Table] = tc
	}
	assert.InDelta(t, 1, tables["events"].Rows, 0.001, "an event an invite")
	assert.InDelta(t, 0.25, tables["reviews"].Rows, 0.001, "a review for every fourth")
	assert.Positive(t, tables["events"].TableBytes+tables["events"].IndexBytes)
	assert.Positive(t, m.RowWrites)
	assert.Greater(t, m.WALBytes, 1000.0)
	assert.InDelta(t, 10, m.Actions, 5, "the invites' Actions and their webhook deliveries': %v", m.ActionsByType)
	assert.Greater(t, m.Workflows, 3.0, "an invite's workflow and its webhook deliveries'")
	assert.Greater(t, m.HistoryEvents, 10*m.Workflows)
	assert.Greater(t, m.HistoryBytes, 1000*m.Workflows)
	require.NotNil(t, m.CombinedCPU, "one dev process")
	assert.Positive(t, *m.CombinedCPU)
	assert.Nil(t, m.APICPU)
	assert.Nil(t, m.PostgresCPU, "the shared server's CPU is not read")
	assert.Positive(t, m.InsertCeiling)
	assert.Contains(t, m.Load, "load average")

	raw, err := os.ReadFile(doc)
	require.NoError(t, err)
	assert.Contains(t, string(raw), "# Capacity")
	assert.Contains(t, string(raw), "12 invites, each to its own address")
}
