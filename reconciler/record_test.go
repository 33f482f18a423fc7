//go:build record

package reconciler_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/recordhistory"
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
	if recordhistory.Kept(path) {
		t.Skip("kept the history recorded before")
	}

	id := r.accept(t, r.fixed(t, eventfixture.Setting{Delay: "PT2S"}))
	r.waitStatus(t, invite.KindInvite, id, invite.Scheduled)
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
	recordhistory.Save(ctx, t, r.c, path, run.GetID(), run.GetRunID())
}
