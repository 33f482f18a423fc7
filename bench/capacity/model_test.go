package capacity

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestActionsPrice holds the tiers to Temporal Cloud's published example
// (11.25 M Actions: $525) and to performance.md's figures (6 M: $295,
// 60 M: $2,225), and prices what lies above the last tier at its rate.
func TestActionsPrice(t *testing.T) {
	t.Parallel()
	for actions, want := range map[float64]float64{
		0: 0, 1e6: 50, 5e6: 250, 6e6: 295, 11.25e6: 525, 60e6: 2225,
		200e6: 250 + 225 + 400 + 1050 + 1500 + 2500,
		300e6: 250 + 225 + 400 + 1050 + 1500 + 2500 + 100*25,
	} {
		assert.InDelta(t, want, ActionsPrice(actions), 1e-6, "%g Actions", actions)
	}
}

// fixedMeasurements are a run's figures, made up for the tests.
func fixedMeasurements() Measurements {
	api, worker, postgres := 0.004, 0.012, 0.003
	return Measurements{
		Taken: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC), Revision: "abc1234",
		Topology: "the production topology", Load: "A loaded machine (load average 12).",
		Mix: Mix{Invites: 1000, ReminderSet: 300, Reminders: 250, Reviews: 150, Reports: 1250, Deliveries: 4000,
			Endpoints: 1, Concurrency: 16},
		Tables: []TableCost{
			{Table: "events", Rows: 1, TableBytes: 2500, IndexBytes: 1500},
			{Table: "webhook_deliveries", Rows: 4, TableBytes: 3000, IndexBytes: 1000},
			{Table: "accounts"}, // unchanged: left out of the table
		},
		RowWrites: 20, WALBytes: 40_000,
		Actions: 8, ActionsByType: map[string]float64{"command_ScheduleActivityTask": 5, "grpc_StartWorkflowExecution": 5},
		Workflows: 5, HistoryEvents: 60, HistoryBytes: 20_000,
		APICPU: &api, WorkerCPU: &worker, PostgresCPU: &postgres, InsertCeiling: 3000,
	}
}

// TestModel: each figure of a daily volume follows from the measurements
// and the assumptions.
func TestModel(t *testing.T) {
	t.Parallel()
	a := DefaultAssumptions
	r := Model(fixedMeasurements(), a, DailyVolumes)
	require.Len(t, r.Scales, 3)
	assert.Equal(t, 5.0, r.Rows)
	assert.Equal(t, 5500.0, r.TableBytes)
	assert.Equal(t, 2500.0, r.IndexBytes)

	s := r.Scales[2] // 10 million a day
	peak := 10e6 / 86400 * 3
	assert.InDelta(t, peak, s.PeakInvitesPerS, 1e-9)
	assert.InDelta(t, peak*20, s.PeakRowWritesPerS, 1e-6)
	assert.InDelta(t, peak*0.04, s.PeakWALMBPerS, 1e-9)
	assert.InDelta(t, 10e6*30*8000/1e9, s.GrowthGBPerMonth, 1e-6) // 2,400 GB
	assert.InDelta(t, 10e6*400*8000/1e9, s.AtRetentionGB, 1e-6)   // 32 TB: more than one primary holds
	assert.InDelta(t, 400, s.WALGBPerDay, 1e-9)
	assert.Equal(t, 80e6, s.ActionsPerDay)
	assert.Equal(t, 2.4e9, s.ActionsPerMonth)
	assert.InDelta(t, ActionsPrice(2.4e9), s.ActionsPrice, 1e-6)
	// Open 7 days, 7 more for the 30 % with a reminder; retained 30 days.
	assert.InDelta(t, 10e6*7*1.3*20000/1e9, s.ActiveStorageGB, 1e-6)
	assert.InDelta(t, s.ActiveStorageGB*720*0.042, s.ActiveStoragePrice, 1e-6)
	assert.InDelta(t, 10e6*30*20000/1e9, s.RetainedStorageGB, 1e-6)
	assert.InDelta(t, 0.1*(s.ActionsPrice+s.ActiveStoragePrice+s.RetainedPrice), s.PlanPrice, 1e-6)
	assert.InDelta(t, 1.1*(s.ActionsPrice+s.ActiveStoragePrice+s.RetainedPrice), s.TemporalPrice, 1e-6)
	require.NotNil(t, s.APICores)
	assert.InDelta(t, peak*0.004/0.6, *s.APICores, 1e-9)      // 2.3 cores
	assert.InDelta(t, peak*0.012/0.6, *s.WorkerCores, 1e-9)   // 6.9 cores
	assert.InDelta(t, peak*0.003/0.6, *s.PostgresCores, 1e-9) // 1.7 cores
	assert.Equal(t, 2, s.APIReplicas)
	assert.Equal(t, 4, s.WorkerReplicas)
	assert.False(t, s.PrimaryFits, "32 TB at retention")

	small := r.Scales[0]
	assert.Equal(t, 2, small.APIReplicas, "never fewer than two")
	assert.Equal(t, 500.0, small.PlanPrice, "the plan's minimum")
	assert.True(t, small.PrimaryFits)

	// One primary: 64 cores 60 % busy at 0.003 s an invite, at 3 × the
	// day's average; 10 TB at 8 kB an invite kept 400 days; this server's
	// 3,000 commits/s at 20 rows an invite.
	assert.InDelta(t, 64*0.6/0.003*86400/3, r.StopByCores, 1e-3)
	assert.InDelta(t, 10e12/(8000*400), r.StopByData, 1e-6)
	assert.InDelta(t, 3000.0/20*86400/3, r.StopByCeiling, 1e-6)
	assert.Equal(t, r.StopByData, r.Stop, "the least of them")

	// Without PostgreSQL's CPU the cores say nothing.
	m := fixedMeasurements()
	m.PostgresCPU, m.InsertCeiling = nil, 0
	r = Model(m, a, DailyVolumes)
	assert.Zero(t, r.StopByCores)
	assert.Equal(t, r.StopByData, r.Stop)
	assert.Nil(t, r.Scales[0].PostgresCores)
}

// TestCapacityDoc renders the document of fixed measurements: no
// template hole (WriteDoc refuses a ragged table), and the figures where
// a reader looks for them.
func TestCapacityDoc(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	require.NoError(t, WriteDoc(&b, Model(fixedMeasurements(), DefaultAssumptions, DailyVolumes)))
	doc := b.String()
	assert.False(t, strings.Contains(doc, "<no value>"))
	for _, want := range []string{
		"**Measured on 2026-11-28 at revision `abc1234`: the production topology. A loaded machine (load average 12).**",
		"| 10 thousand a day | 1 million a day | 10 million a day |",
		"| PostgreSQL rows kept | 5.00 |",
		"| WAL bytes | 40.0 kB |",
		"| Temporal Actions (the server's `action` metric) | 8.00 |",
		"| `events` | 1.00 | 2.50 kB | 1.50 kB |\n| `webhook_deliveries` | 4.00 | 3.00 kB | 1.00 kB |",
		"| Temporal Actions a day | 80,000 | 8,000,000 | 80,000,000 |",
		"| one PostgreSQL primary holds it | yes | yes | **no** |",
		"| worker replicas of 2.00 cores | 2 | 2 | 4 |",
		"1,000 invites, each to its own address",
		"**Temporal Cloud a month** | **$680** | **$14,171** | **$132,548** |",
		"By its data**: 10.0 TB at 400 days' retention is\n  3.12 million invites a day",
		"So one primary carries up to about **3.12 million invites a day**",
	} {
		assert.True(t, strings.Contains(doc, want), "the document lacks %q", want)
	}
	assert.False(t, strings.Contains(doc, "`accounts`"), "a table the run did not change")

	// One dev process: API and worker are not told apart.
	m := fixedMeasurements()
	combined := 0.02
	m.APICPU, m.WorkerCPU, m.CombinedCPU, m.PostgresCPU = nil, nil, &combined, nil
	b.Reset()
	require.NoError(t, WriteDoc(&b, Model(m, DefaultAssumptions, DailyVolumes)))
	doc = b.String()
	for _, want := range []string{
		"| CPU seconds of the one `touchpoint dev` process (API, worker and the embedded Temporal server) | 0.020 |",
		"| cores of API and worker together at the peak | 0.012 | 1.16 | 11.6 |",
		"By its cores: PostgreSQL's CPU was not measured",
	} {
		assert.True(t, strings.Contains(doc, want), "the document lacks %q", want)
	}
	assert.False(t, strings.Contains(doc, "API replicas"))
}

// TestCheckTables: a ragged table is refused, a well-formed one passes.
func TestCheckTables(t *testing.T) {
	t.Parallel()
	require.NoError(t, checkTables("# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\ntext\n\n| c |\n|---|\n| 3 |\n"))
	require.ErrorContains(t, checkTables("| a | b |\n|---|---|\n| 1 |\n"), "1 cells under a header of 2")
}

var updateCapacityDoc = flag.Bool("update-capacity-doc", false,
	"TestCommittedCapacityDoc: render docs/capacity.md again from the measurements it holds (after a change of the model or its template)")

// TestCommittedCapacityDoc: docs/capacity.md is exactly what the model
// and its template make of the measurements it holds — nothing in it is
// typed by hand, and a change of the model is a change of the document.
// A new run writes a new one (touchpoint bench --capacity); a change of
// the model renders it again: go test ./bench/capacity -run TestCommittedCapacityDoc -update-capacity-doc.
func TestCommittedCapacityDoc(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", "docs", "capacity.md")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	m, err := ReadMeasurements(string(raw))
	require.NoError(t, err)
	assert.Positive(t, m.Mix.Invites, "a run's measurements")
	var b bytes.Buffer
	require.NoError(t, WriteDoc(&b, Model(m, DefaultAssumptions, DailyVolumes)))
	if *updateCapacityDoc {
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
		return
	}
	assert.True(t, bytes.Equal(raw, b.Bytes()),
		"docs/capacity.md is not what the model makes of its measurements: run go test ./bench/capacity -run TestCommittedCapacityDoc -update-capacity-doc")
}

// TestCapacityDocRoundTrip: the measurements written into a document are
// read back whole, even with text that a comment may not hold.
func TestCapacityDocRoundTrip(t *testing.T) {
	t.Parallel()
	m := fixedMeasurements()
	m.Topology = "a stack run with --base-url --> here"
	var b bytes.Buffer
	require.NoError(t, WriteDoc(&b, Model(m, DefaultAssumptions, DailyVolumes)))
	got, err := ReadMeasurements(b.String())
	require.NoError(t, err)
	assert.Equal(t, m, got)
	_, err = ReadMeasurements("# Capacity\n")
	assert.ErrorContains(t, err, "no measurements")
}
