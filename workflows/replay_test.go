package workflows_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/workflows"
)

// TestReplayRecordedHistories replays the histories of real runs (recorded
// with `go test -tags record ./internal/recordhistory/`, and the
// reconciler's with `go test -tags record ./reconciler/`) with the current
// code: a change that is not behind workflow.GetVersion fails here.
func TestReplayRecordedHistories(t *testing.T) {
	t.Parallel()
	replayEach(t, "testdata/*.json", func(r worker.WorkflowReplayer) {
		r.RegisterWorkflowWithOptions(workflows.InviteWith(workflows.Options{}), workflow.RegisterOptions{Name: workflows.WorkflowType})
		r.RegisterWorkflowWithOptions(workflows.Reconcile, workflow.RegisterOptions{Name: workflows.ReconcileWorkflowType})
	}, func(t *testing.T, s string) {
		// The recorded runs had a customer jane.doe@example.com named
		// Jane: neither may appear anywhere in Temporal.
		assert.NotContains(t, strings.ToLower(s), "jane")
	})
}

// replayEach replays every history the pattern names with the workflows
// register sets up, then hands each string in the history (payloads
// decoded) to check.
func replayEach(t *testing.T, pattern string, register func(worker.WorkflowReplayer), check func(t *testing.T, s string)) {
	files, err := filepath.Glob(pattern)
	require.NoError(t, err)
	require.NotEmpty(t, files)
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			t.Parallel()
			r := worker.NewWorkflowReplayer()
			register(r)
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(logger, f))

			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			var doc any
			require.NoError(t, json.Unmarshal(raw, &doc))
			for _, s := range stringsIn(doc) {
				check(t, s)
			}
		})
	}
}

// stringsIn returns every string in a JSON document, and the decoded form
// of those that are base64 (payload data).
func stringsIn(v any) []string {
	switch v := v.(type) {
	case string:
		if b, err := base64.StdEncoding.DecodeString(v); err == nil {
			return []string{v, string(b)}
		}
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, stringsIn(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range v {
			out = append(out, stringsIn(e)...)
		}
		return out
	}
	return nil
}
