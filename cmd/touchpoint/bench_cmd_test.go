//go:build !nodev

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
)

// TestBenchCommand runs `touchpoint bench --baseline` with tiny numbers
// against a `touchpoint dev` it starts itself — this test binary, which
// runs main() in the child (TestMain) — and checks its JSON line.
func TestBenchCommand(t *testing.T) {
	benchChildEnv = []string{runMainEnv + "=1"}
	t.Cleanup(func() { benchChildEnv = nil })
	vars := map[string]string{"DATABASE_URL": testdb.ServerURL()}

	out, err := runCLI(t, vars, "bench", "--events", "20", "--concurrency", "4", "--baseline")
	require.NoError(t, err, "stdout: %s", out)
	require.Equal(t, 1, strings.Count(out, "\n"), "one JSON line: %s", out)

	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	for _, k := range []string{"events", "concurrency", "accepted_per_s", "accept_p50_ms", "accept_p95_ms",
		"accept_p99_ms", "invites_sent", "invites_per_s", "invite_latency_p50_ms", "invite_latency_p99_ms",
		"errors", "peak_rss_mb", "baseline", "ratios"} {
		assert.Contains(t, res, k)
	}
	assert.EqualValues(t, 20, res["events"])
	assert.EqualValues(t, 4, res["concurrency"])
	assert.EqualValues(t, 20, res["accepted"], "every event accepted")
	assert.EqualValues(t, 20, res["invites_sent"], "every invite sent")
	assert.Equal(t, map[string]any{"503": 0.0}, res["errors"])
	assert.Positive(t, res["peak_rss_mb"])
	baseline, _ := res["baseline"].(map[string]any)
	for _, k := range []string{"inserts_per_s", "insert_p99_ms", "inserts_under_load_per_s", "insert_under_load_p99_ms", "workflow_starts_per_s", "workflow_completions_per_s"} {
		assert.Positive(t, baseline[k], k)
	}
	ratios, _ := res["ratios"].(map[string]any)
	assert.Positive(t, ratios["accepted_vs_inserts"])
	assert.Positive(t, ratios["accepted_vs_inserts_under_load"])
	assert.Positive(t, ratios["invites_vs_completions"])
}
