package workflows

import "go.temporal.io/sdk/workflow"

// DeploymentName is the Temporal Worker Deployment every versioned
// Touchpoint worker joins, as the Version of its build (the binary's
// version is the Build ID).
const DeploymentName = "touchpoint"

// VersioningBehavior is how runs of a workflow type move between worker
// builds under Worker Versioning; every workflow type has one, and the
// worker registers it with the type:
//
//   - An invite sleeps for days between its steps, longer than a build
//     lives: it moves to the current build at its next workflow task
//     (AutoUpgrade), and replays there. That is safe because every change
//     to its code is guarded by workflow.GetVersion and the recorded
//     histories of testdata/ replay on the new code.
//   - A webhook delivery, a template test send and a reconciler run end on
//     the build they began on (Pinned): they never replay on other code,
//     and the build they run on drains once they have ended.
//
// A type without a behaviour is a mistake: the SDK refuses to register it
// on a versioned worker.
func VersioningBehavior(workflowType string) workflow.VersioningBehavior {
	switch workflowType {
	case WorkflowType:
		return workflow.VersioningBehaviorAutoUpgrade
	case WebhookWorkflowType, TestSendWorkflowType, ReconcileWorkflowType:
		return workflow.VersioningBehaviorPinned
	}
	return workflow.VersioningBehaviorUnspecified
}
