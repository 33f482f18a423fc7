package workflows_test

import (
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

// TestReplayWebhookHistories replays the delivery workflow's recorded
// histories (`go test -tags record -run TestRecordWebhookHistories
// ./internal/webhookstack/`) with the current code: a change that is not
// behind workflow.GetVersion fails here.
func TestReplayWebhookHistories(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/webhook/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			t.Parallel()
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(workflows.DeliverWebhookWith(workflows.WebhookOptions{}),
				workflow.RegisterOptions{Name: workflows.WebhookWorkflowType})
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(logger, f))

			// Neither the body nor the secret of a delivery enters
			// Temporal, and no customer data: the recorded customers had
			// addresses at example.com.
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			var doc any
			require.NoError(t, json.Unmarshal(raw, &doc))
			for _, s := range stringsIn(doc) {
				assert.NotContains(t, s, "example.com")
				assert.NotContains(t, s, "whsec_")
				assert.NotContains(t, s, `"timestamp"`, "no message body")
			}
		})
	}
}
