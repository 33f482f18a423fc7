package starter_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/starter"
)

// TestRestartAfterClosedRun: the reconciler's restart order starts a new
// run after a closed one — keeping the event's schedule (no Retry) — and
// is skipped once the invite is no longer pending.
func TestRestartAfterClosedRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	notifier := starter.NewNotifier(e.st.Events, e.logger)
	run(t, notifier.Run)
	run(t, e.starter(e.temporal).Run)

	ids := e.accept(t, 2)
	notifier.Poke()
	e.waitDone(t, ids, 30*time.Second)
	lost, moved := ids[0], ids[1]
	first := e.describe(t, lost, "").GetWorkflowExecutionInfo().GetExecution().GetRunId()
	require.NoError(t, e.temporal.TerminateWorkflow(ctx, lost, first, "test: lost"))
	e.setStatus(t, lost, invite.Scheduled)

	ok, err := e.st.Invites.RestartInvite(ctx, lost, invite.Scheduled)
	require.NoError(t, err)
	require.True(t, ok)
	notifier.Poke()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.True(c, e.row(c, lost, string(invite.RunRestart)).Done)
	}, 30*time.Second, 20*time.Millisecond)
	d := e.describe(t, lost, "")
	second := d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	assert.NotEqual(t, first, second, "a new run")
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, d.GetWorkflowExecutionInfo().GetStatus())
	assert.Equal(t, fmt.Sprintf("Restart: Invite for %q event %s", e.typeName, lost), summary(t, d))
	in, _ := e.startInput(t, lost, second)
	assert.False(t, in.Retry, "a restart keeps the event's schedule")

	// A restart order whose invite moved on before the starter took it
	// (another run took it over) starts nothing, even after a closed run.
	earlier := e.describe(t, moved, "").GetWorkflowExecutionInfo().GetExecution().GetRunId()
	require.NoError(t, e.temporal.TerminateWorkflow(ctx, moved, earlier, "test: lost"))
	e.setStatus(t, moved, invite.Scheduled)
	_, err = e.st.DB().Exec(`INSERT INTO outbox (event_id, kind, created_at, next_attempt_at) VALUES ($1, $2, now(), now())`,
		moved, string(invite.RunRestart))
	require.NoError(t, err)
	notifier.Poke()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.True(c, e.row(c, moved, string(invite.RunRestart)).Done)
	}, 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, earlier, e.describe(t, moved, "").GetWorkflowExecutionInfo().GetExecution().GetRunId(), "no new run")
}
