package worker_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/worker"
	"github.com/touchpoint/touchpoint/workflows"
)

// The Schedule starts the reconciler by its type name and the workflow
// calls its step by name: both must be registered under those names.
func TestRegisterReconcilerCoversTheContract(t *testing.T) {
	t.Parallel()
	var r recorder
	worker.RegisterReconciler(&r, &activities.Reconciler{})
	assert.Equal(t, []string{workflows.ReconcileWorkflowType}, r.workflows)
	assert.Equal(t, []string{workflows.ReconcileInvitesActivity}, r.activities)

	// Its step's name is not one of the invite steps'.
	var invites recorder
	worker.Register(&invites, &activities.Activities{}, workflows.Options{})
	assert.NotContains(t, invites.activities, workflows.ReconcileInvitesActivity)
}
