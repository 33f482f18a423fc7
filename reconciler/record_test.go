//go:build record

package reconciler_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/workflows"
)

// TestRecordReconcileHistory records a run of the reconciler that
// restarted an invite into workflows/testdata, for the replay test:
//
//	go test -tags record -count=1 -run TestRecordReconcileHistory ./reconciler/
//
// A history that is there already is kept (TOUCHPOINT_RECORD_OVERWRITE=1
// records it anew).
func TestRecordReconcileHistory(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	path := filepath.Join("..", "workflows", "testdata", "reconcile_restarted.json")
	if _, err := os.Stat(path); err == nil && os.Getenv("TOUCHPOINT_RECORD_OVERWRITE") != "1" {
		t.Skip("kept the history recorded before")
	}

	id := r.accept(t, r.fixed(t, eventfixture.Setting{Delay: "PT2S"}))
	r.waitStatus(t, id, invite.Scheduled)
	require.NoError(t, r.c.TerminateWorkflow(ctx, workflows.WorkflowID(id), "", "lost"))
	var run client.WorkflowRun
	for deadline := time.Now().Add(time.Minute); ; {
		var err error
		run, err = r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: workflows.ReconcileScheduleID + "-record-" + uuid.NewString(), TaskQueue: workflows.TaskQueue,
		}, workflows.ReconcileWorkflowType, workflows.ReconcileInput{Grace: time.Second})
		require.NoError(t, err)
		var res workflows.ReconcileResult
		require.NoError(t, run.Get(ctx, &res))
		if res.Restarted > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the invite never became a candidate")
	}
	hist := &historypb.History{}
	it := r.c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		hist.Events = append(hist.Events, e)
	}
	raw, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(hist)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(raw, '\n'), 0o644))
}
