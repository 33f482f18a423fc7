//go:build record

package recordhistory_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/recordhistory"
	"github.com/touchpoint/touchpoint/internal/testactivities"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/worker"
	"github.com/touchpoint/touchpoint/workflows"
)

const testdata = "../../workflows/testdata"

func TestRecordHistories(t *testing.T) {
	ctx := t.Context()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := testtemporal.Start(t, testtemporal.Options{SearchAttributes: workflows.SearchAttributes(), Stderr: io.Discard})
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Logger: log.NewStructuredLogger(quiet)})
	require.NoError(t, err)
	t.Cleanup(c.Close)

	wired := testactivities.New(t)
	db, smtp, acts := wired.DB, wired.SMTP, wired.Acts
	w := worker.New(c, acts, worker.Options{Workflow: workflows.Options{SendInitialInterval: time.Second}})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	start := func(in workflows.InviteInput) client.WorkflowRun {
		t.Helper()
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: workflows.WorkflowID(in.EventID), TaskQueue: workflows.TaskQueue,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
			TypedSearchAttributes: workflows.StartSearchAttributes(in),
			StaticSummary:         "Invite for event " + in.EventID,
		}, workflows.Invite, in)
		require.NoError(t, err)
		return run
	}
	finish := func(name string, run client.WorkflowRun, wantStatus invite.Status) {
		t.Helper()
		var res workflows.InviteResult
		err := run.Get(ctx, &res)
		if wantStatus == invite.Failed {
			require.Error(t, err)
		} else {
			require.NoError(t, err)
			assert.Equal(t, wantStatus, res.Status, name)
		}
		save(ctx, t, c, name, run)
	}
	event := func(s eventfixture.Setting, e eventfixture.Event) workflows.InviteInput {
		a := eventfixture.NewAccount(t, db, s)
		return workflows.InviteInput{EventID: a.Event(t, e), AccountID: a.AccountID, EventTypeID: a.EventTypeID,
			ChannelID: a.ChannelID, CustomerReference: "C-42"}
	}

	finish("sent", start(event(eventfixture.Setting{Delay: "PT2S"}, eventfixture.Event{FirstName: "Jane"})), invite.Sent)
	finish("skipped_event_type_inactive", start(event(eventfixture.Setting{EventTypeInactive: true}, eventfixture.Event{})), invite.Skipped)

	// cancelWhileWaiting records an invite cancelled by the API's signal
	// while it waits for its send time.
	cancelWhileWaiting := func(name string) {
		t.Helper()
		run := start(event(eventfixture.Setting{Delay: "P1D"}, eventfixture.Event{}))
		require.EventuallyWithT(t, func(c2 *assert.CollectT) {
			v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), workflows.StatusQuery)
			require.NoError(c2, err)
			var st workflows.InviteResult
			require.NoError(c2, v.Get(&st))
			assert.Equal(c2, invite.Scheduled, st.Status)
		}, 10*time.Second, 50*time.Millisecond)
		require.NoError(t, c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), workflows.CancelSignal, workflows.CancelRequest{Source: "api"}))
		finish(name, run, invite.Cancelled)
	}
	cancelWhileWaiting("cancelled_by_signal")

	smtp.FailRCPT(1, 451)
	finish("retried_then_sent", start(event(eventfixture.Setting{}, eventfixture.Event{})), invite.Sent)

	in := event(eventfixture.Setting{}, eventfixture.Event{})
	smtp.FailRCPT(1, 550)
	finish("failed_rejected", start(in), invite.Failed)
	// The refusal put the address on the suppression list; lifted, the
	// retry sends.
	require.NoError(t, wired.Store.Suppressions.LiftSuppression(ctx, in.AccountID, "jane.doe@example.com", suppressiondb.ActorOperator, true))
	in.Retry = true
	finish("retry_run_sent", start(in), invite.Sent)

	// Since the reminder (workflow.GetVersion "reminder"): one sent after
	// its delay, and one a review made unnecessary.
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	a.Set(t, "reminder_delay", "PT1S")
	in = workflows.InviteInput{EventID: a.Event(t, eventfixture.Event{FirstName: "Jane"}), AccountID: a.AccountID,
		EventTypeID: a.EventTypeID, ChannelID: a.ChannelID, CustomerReference: "C-42"}
	finish("reminder_sent", start(in), invite.Sent)

	a = eventfixture.NewAccount(t, db, eventfixture.Setting{})
	a.Set(t, "reminder_delay", "P1D")
	in = workflows.InviteInput{EventID: a.Event(t, eventfixture.Event{}), AccountID: a.AccountID,
		EventTypeID: a.EventTypeID, ChannelID: a.ChannelID, CustomerReference: "C-42"}
	run := start(in)
	require.EventuallyWithT(t, func(c2 *assert.CollectT) {
		v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), workflows.StatusQuery)
		require.NoError(c2, err)
		var st workflows.InviteResult
		require.NoError(c2, v.Get(&st))
		if assert.NotNil(c2, st.Reminder) {
			assert.Equal(c2, invite.Scheduled, st.Reminder.Status)
		}
	}, 10*time.Second, 50*time.Millisecond)
	rev, _, err := wired.Store.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: in.EventID, Rating: 5, Comment: "", Locale: "en"})
	require.NoError(t, err)
	require.NoError(t, c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), workflows.ReviewSignal, workflows.ReviewReceived{ReviewID: rev.ID}))
	finish("reminder_skipped_reviewed", run, invite.Sent)

	// Since the one send pipeline (workflow.GetVersion "one-send-pipeline"):
	// the invite and its reminder run the same steps, keyed by kind.
	finish("pipeline_sent", start(event(eventfixture.Setting{}, eventfixture.Event{FirstName: "Jane"})), invite.Sent)
	a = eventfixture.NewAccount(t, db, eventfixture.Setting{})
	a.Set(t, "reminder_delay", "PT1S")
	in = workflows.InviteInput{EventID: a.Event(t, eventfixture.Event{FirstName: "Jane"}), AccountID: a.AccountID,
		EventTypeID: a.EventTypeID, ChannelID: a.ChannelID, CustomerReference: "C-42"}
	finish("pipeline_reminder_sent", start(in), invite.Sent)

	// Since fewer Temporal Actions (workflow.GetVersion "fewer-actions"):
	// the status search attribute changes only when the invite ends. Each
	// waits for its send time, as invites do.
	finish("fewer_actions_sent", start(event(eventfixture.Setting{Delay: "PT2S"}, eventfixture.Event{FirstName: "Jane"})), invite.Sent)
	a = eventfixture.NewAccount(t, db, eventfixture.Setting{Delay: "PT2S"})
	a.Set(t, "reminder_delay", "PT1S")
	in = workflows.InviteInput{EventID: a.Event(t, eventfixture.Event{FirstName: "Jane"}), AccountID: a.AccountID,
		EventTypeID: a.EventTypeID, ChannelID: a.ChannelID, CustomerReference: "C-42"}
	finish("fewer_actions_reminder_sent", start(in), invite.Sent)
	cancelWhileWaiting("fewer_actions_cancelled_by_signal")
}

// save writes the run's history as testdata/<name>.json, unless one
// recorded before is kept (Kept).
func save(ctx context.Context, t *testing.T, c client.Client, name string, run client.WorkflowRun) {
	t.Helper()
	path := filepath.Join(testdata, name+".json")
	if recordhistory.Kept(path) {
		t.Logf("%s: kept the history recorded before", name)
		return
	}
	recordhistory.Save(ctx, t, c, path, run.GetID(), run.GetRunID())
}
