// Package workflows holds the invite workflow and its public contract
// (contract.go): task queue, workflow ID, input and result, the cancel
// signal, the status query and the search attributes. The API and the
// outbox starter use only the contract. The workflow's steps are
// activities called by name (steps.go): this package does no I/O and
// imports none of the packages that do.
//
// One workflow runs per accepted event:
//
//  1. A local activity loads the event's schedule copy and whether its
//     event type and setting are active; inactive ones end skipped at once.
//  2. The send time is resolved (sendtime.SendTime, recorded with
//     SideEffect so replays never depend on the worker's time-zone data; a
//     retry run sends now) and recorded as scheduled.
//  3. A durable timer waits for it; a cancel signal (or a cancel request)
//     ends the wait and the invite is recorded cancelled.
//  4. The send activity re-checks the setting and the throttle, renders
//     and delivers the invite at most once, retried with back-off on
//     transient failures; the workflow records the outcome.
//  5. Once the invite is sent, its reminder, if the setting asks for one,
//     runs the same steps: planned from the send time, waited for (a
//     review or a cancel ends the wait), sent at most once.
//
// The invite and the reminder are two kinds of one send (invite.Kind):
// one set of steps (steps.go), each taking the kind in its input. Runs
// begun before that call the per-kind step names of their day, which the
// worker keeps registered.
//
// Every state change updates the status query and the workflow's current
// details (shown in the Temporal UI). The starter sets the search
// attributes at start, TouchpointInviteStatus "pending"; the run changes
// it once, to the status the invite ends in. (Runs begun before the change
// ID fewer-actions upserted it at every change: each upsert is a Temporal
// Action, the unit Temporal Cloud bills.)
//
// The webhook delivery workflow (webhook.go) lives here too, with its own
// contract and task queue: one run per delivery, one activity retried for
// up to three days. Its recorded histories are in testdata/webhook.
//
// # Changing this workflow
//
// Workflow code is replayed from history, so a change that alters the
// sequence of commands (activities, timers, side effects, signals read)
// must not change what running workflows replay. Guard it:
//
//	if workflow.GetVersion(ctx, "short-change-id", workflow.DefaultVersion, 1) == 1 {
//		// new behaviour
//	} else {
//		// old behaviour, kept until no run that started before it is open
//	}
//
// Use one change ID per change, never reuse one, raise maxSupported for a
// later change of the same code, and record a history of the new code
// into testdata/ so the replay test guards it from then on. Activity
// timeouts and retry policies (Options) are not part of the replay check
// and may change freely.
package workflows
