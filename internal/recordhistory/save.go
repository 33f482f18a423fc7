package recordhistory

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
)

// Kept reports whether a history was recorded at path before and is to be
// kept: it was recorded by the workflow code of its day, which is what the
// replay test must go on replaying. TOUCHPOINT_RECORD_OVERWRITE=1 records
// every one anew.
func Kept(path string) bool {
	_, err := os.Stat(path)
	return err == nil && os.Getenv("TOUCHPOINT_RECORD_OVERWRITE") != "1"
}

// Save writes the history of a run (runID "" for the latest) to path, as
// the JSON the replay test reads.
func Save(ctx context.Context, t testing.TB, c client.Client, path, workflowID, runID string) {
	t.Helper()
	hist := &historypb.History{}
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		hist.Events = append(hist.Events, e)
	}
	raw, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(raw, '\n'), 0o644))
}
