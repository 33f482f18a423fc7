package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/internal/testworkflow"
	"github.com/touchpoint/touchpoint/workflows"
)

var rec *activities.Reconciler

func reconcileEnv() *testsuite.TestWorkflowEnvironment {
	env := testworkflow.New()
	env.RegisterWorkflowWithOptions(workflows.Reconcile, workflow.RegisterOptions{Name: workflows.ReconcileWorkflowType})
	env.RegisterActivity(&activities.Reconciler{})
	return env
}

func TestReconcileWorkflow(t *testing.T) {
	t.Parallel()
	want := workflows.ReconcileResult{Candidates: 5, Running: 2, Restarted: 2, Uncertain: 1}
	for name, tc := range map[string]struct {
		failures int // attempts that fail before one succeeds
		wantErr  bool
	}{
		"first attempt":              {0, false},
		"retried after a failure":    {2, false},
		"fails after three attempts": {3, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := reconcileEnv()
			calls := 0
			env.OnActivity(rec.ReconcileInvites, mock.Anything, workflows.ReconcileInput{Grace: time.Minute}).Return(
				func(_ context.Context, _ workflows.ReconcileInput) (workflows.ReconcileResult, error) {
					calls++
					if calls <= tc.failures {
						return workflows.ReconcileResult{}, errors.New("temporal unreachable")
					}
					return want, nil
				})
			env.ExecuteWorkflow(workflows.ReconcileWorkflowType, workflows.ReconcileInput{Grace: time.Minute})
			require.True(t, env.IsWorkflowCompleted())
			env.AssertExpectations(t)
			if tc.wantErr {
				assert.Error(t, env.GetWorkflowError())
				assert.Equal(t, 3, calls, "three attempts, then the run fails; the next scheduled run tries again")
				return
			}
			require.NoError(t, env.GetWorkflowError())
			var got workflows.ReconcileResult
			require.NoError(t, env.GetWorkflowResult(&got))
			assert.Equal(t, want, got)
			assert.Equal(t, tc.failures+1, calls)
		})
	}
}
