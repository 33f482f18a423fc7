package reconciler_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/internal/testactivities"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/reconciler"
	"github.com/touchpoint/touchpoint/starter"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/worker"
	"github.com/touchpoint/touchpoint/workflows"
)

// rig is the whole invite machinery on real parts: a Temporal server (in
// a helper process), PostgreSQL, a worker with the real activities, the
// outbox starter and an SMTP server.
type rig struct {
	c     client.Client
	db    *store.Store
	smtp  *smtptest.Server
	fixed func(*testing.T, eventfixture.Setting) *eventfixture.Account
}

const namespace = "default"

func newRig(t *testing.T) *rig {
	t.Helper()
	srv := testtemporal.Start(t, testtemporal.Options{Namespace: namespace, SearchAttributes: workflows.SearchAttributes()})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: namespace, Logger: sdklog.NewStructuredLogger(quiet)})
	require.NoError(t, err)
	t.Cleanup(c.Close)

	wired := testactivities.New(t)
	db, st, smtp, acts := wired.DB, wired.Store, wired.SMTP, wired.Acts
	acts.Logger = quiet
	w := worker.New(c, acts, worker.Options{Stuck: st.Invites, Outbox: st.Events, ReconcileGrace: time.Hour}) // runs below pass their own grace
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	s := &starter.Starter{Outbox: st.Events, Temporal: c, Logger: quiet, DatabaseURL: testdb.URL(t, db), Tuning: starter.Tuning{Sweep: 200 * time.Millisecond}}
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	return &rig{c: c, db: st, smtp: smtp, fixed: func(t *testing.T, s eventfixture.Setting) *eventfixture.Account {
		return eventfixture.NewAccount(t, db, s)
	}}
}

// accept stores an event of a with its start order, as the API does.
func (r *rig) accept(t *testing.T, a *eventfixture.Account) string {
	t.Helper()
	id := a.Event(t, eventfixture.Event{})
	_, err := r.db.DB().Exec(`INSERT INTO outbox (event_id, kind, created_at, next_attempt_at) VALUES ($1, 'start', now(), now())`, id)
	require.NoError(t, err)
	require.NoError(t, r.db.Events.Notify(context.Background()))
	return id
}

// acceptReminded accepts an event whose reminder is planned delay after
// its invite, and waits until the reminder is scheduled.
func (r *rig) acceptReminded(t *testing.T, delay string) string {
	t.Helper()
	a := r.fixed(t, eventfixture.Setting{})
	a.Set(t, "reminder_delay", delay)
	id := r.accept(t, a)
	r.waitStatus(t, invite.KindReminder, id, invite.Scheduled)
	return id
}

// orders counts the event's orders in the outbox: of kind, or of every
// kind when kind is "".
func (r *rig) orders(t *testing.T, id, kind string) int {
	t.Helper()
	var n int
	require.NoError(t, r.db.DB().Get(&n, `SELECT count(*) FROM outbox WHERE event_id = $1 AND ($2 = '' OR kind = $2)`, id, kind))
	return n
}

func (r *rig) state(t *testing.T, id string) invite.State {
	t.Helper()
	st, err := r.db.Invites.LoadInviteState(context.Background(), id)
	require.NoError(t, err)
	return st
}

func (r *rig) reminder(t *testing.T, id string) invite.Reminder {
	t.Helper()
	rem, err := r.db.Invites.LoadReminder(context.Background(), id)
	require.NoError(t, err)
	return rem
}

// statusOf is the status of the event's invite or reminder.
func (r *rig) statusOf(t *testing.T, k invite.Kind, id string) invite.Status {
	t.Helper()
	if k == invite.KindReminder {
		return r.reminder(t, id).Status
	}
	return r.state(t, id).Status
}

// waitStatus waits until the event's invite or reminder has the status.
func (r *rig) waitStatus(t *testing.T, k invite.Kind, id string, want invite.Status) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, want, r.statusOf(t, k, id))
	}, 30*time.Second, 50*time.Millisecond, "%s of %s to become %s", k, id, want)
}

// reconcile runs the reconciler workflow once, as its schedule would,
// with grace, and returns what it did.
func (r *rig) reconcile(t *testing.T, grace time.Duration) workflows.ReconcileResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.ReconcileScheduleID + "-test-" + uuid.NewString(), TaskQueue: workflows.TaskQueue,
	}, workflows.ReconcileWorkflowType, workflows.ReconcileInput{Grace: grace})
	require.NoError(t, err)
	var res workflows.ReconcileResult
	require.NoError(t, run.Get(ctx, &res))
	return res
}

// reconcileUntil runs the reconciler until the event's invite or reminder
// has the status: a candidate becomes one only once its grace has passed.
func (r *rig) reconcileUntil(t *testing.T, k invite.Kind, id string, want invite.Status, grace time.Duration) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		r.reconcile(t, grace)
		assert.Equal(c, want, r.statusOf(t, k, id))
	}, time.Minute, 200*time.Millisecond, "%s of %s to become %s", k, id, want)
}

// received counts the messages of the event's invite or reminder that the
// SMTP server received.
func (r *rig) received(t *testing.T, k invite.Kind, id string) int {
	t.Helper()
	prefix := id + "@"
	if k == invite.KindReminder {
		prefix = id + ".reminder@"
	}
	n := 0
	for _, m := range r.smtp.Messages() {
		msg, err := m.Parse()
		require.NoError(t, err)
		if strings.HasPrefix(strings.Trim(msg.Header.Get("Message-Id"), "<>"), prefix) {
			n++
		}
	}
	return n
}

func (r *rig) describe(id string) (enumspb.WorkflowExecutionStatus, error) {
	d, err := r.c.DescribeWorkflowExecution(context.Background(), workflows.WorkflowID(id), "")
	if err != nil {
		return 0, err
	}
	return d.GetWorkflowExecutionInfo().GetStatus(), nil
}

func TestReconciler(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	const grace = time.Second

	// A waiting workflow terminated from the Temporal client: its invite is
	// restarted through the outbox, keeping its schedule, and sent once.
	t.Run("terminated", func(t *testing.T) {
		t.Parallel()
		id := r.accept(t, r.fixed(t, eventfixture.Setting{Delay: "PT6S"}))
		r.waitStatus(t, invite.KindInvite, id, invite.Scheduled)
		planned := r.state(t, id).ScheduledFor
		require.NoError(t, r.c.TerminateWorkflow(context.Background(), workflows.WorkflowID(id), "", "lost by accident"))
		status, err := r.describe(id)
		require.NoError(t, err)
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, status)
		assert.Equal(t, invite.Scheduled, r.state(t, id).Status, "the database still says scheduled")
		r.reconcile(t, time.Hour)
		assert.Equal(t, invite.Scheduled, r.state(t, id).Status, "not a candidate within the grace period")

		r.reconcileUntil(t, invite.KindInvite, id, invite.Sent, grace)
		st := r.state(t, id)
		assert.Equal(t, 1, st.Attempts)
		require.NotNil(t, st.SentAt)
		assert.False(t, st.SentAt.Before(*planned), "sent at its time or later, never before: the schedule was kept")
		assert.Equal(t, 1, r.received(t, invite.KindInvite, id))
		// The run marks the invite sent and then completes.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			status, err := r.describe(id)
			require.NoError(c, err)
			assert.Equal(c, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, status)
		}, 30*time.Second, 50*time.Millisecond, "the new run did it")
	})

	// A workflow deleted from Temporal's store (as with lost state): the
	// same.
	t.Run("deleted", func(t *testing.T) {
		t.Parallel()
		id := r.accept(t, r.fixed(t, eventfixture.Setting{Delay: "PT6S"}))
		r.waitStatus(t, invite.KindInvite, id, invite.Scheduled)
		_, err := r.c.WorkflowService().DeleteWorkflowExecution(context.Background(), &workflowservice.DeleteWorkflowExecutionRequest{
			Namespace: namespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: workflows.WorkflowID(id)}})
		require.NoError(t, err)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			_, err := r.describe(id)
			var notFound *serviceerror.NotFound
			assert.ErrorAs(c, err, &notFound)
		}, 30*time.Second, 50*time.Millisecond, "the workflow is gone")

		r.reconcileUntil(t, invite.KindInvite, id, invite.Sent, grace)
		assert.Equal(t, 1, r.received(t, invite.KindInvite, id))
		assert.Equal(t, 1, r.state(t, id).Attempts)
	})

	// A send interrupted together with its workflow: the invite may have
	// gone out, so it fails as delivery_uncertain and nothing is sent.
	t.Run("sending without a run", func(t *testing.T) {
		t.Parallel()
		a := r.fixed(t, eventfixture.Setting{})
		id := a.Event(t, eventfixture.Event{Status: invite.Sending})
		_, err := r.db.DB().Exec(`UPDATE events SET updated_at = now() - interval '1 hour', attempts = 1 WHERE id = $1`, id)
		require.NoError(t, err)

		r.reconcileUntil(t, invite.KindInvite, id, invite.Failed, grace)
		st := r.state(t, id)
		assert.Equal(t, invite.DeliveryUncertain, st.Reason)
		assert.Contains(t, st.LastError, "its workflow is missing")
		assert.Zero(t, r.received(t, invite.KindInvite, id))
		assert.Zero(t, r.orders(t, id, ""), "never restarted")
		_, err = r.describe(id)
		assert.Error(t, err, "no run was started")
	})

	// A pending invite whose start order was done, yet no run exists.
	t.Run("pending without a run", func(t *testing.T) {
		t.Parallel()
		a := r.fixed(t, eventfixture.Setting{})
		id := a.Event(t, eventfixture.Event{})
		_, err := r.db.DB().Exec(`UPDATE events SET updated_at = now() - interval '1 hour' WHERE id = $1`, id)
		require.NoError(t, err)
		_, err = r.db.DB().Exec(`INSERT INTO outbox (event_id, created_at, next_attempt_at, done_at) VALUES ($1, now(), now(), now())`, id)
		require.NoError(t, err)
		r.reconcileUntil(t, invite.KindInvite, id, invite.Sent, grace)
		assert.Equal(t, 1, r.received(t, invite.KindInvite, id))
	})

	// A reminder waiting when its workflow was terminated, after its invite
	// was sent: the reconciler finds it by its stored state and restarts it
	// through the outbox; the new run finds the invite sent and sends the
	// reminder once, at its time, and the invite once.
	t.Run("reminder terminated", func(t *testing.T) {
		t.Parallel()
		id := r.acceptReminded(t, "PT6S")
		planned := r.reminder(t, id).ScheduledFor
		require.NoError(t, r.c.TerminateWorkflow(context.Background(), workflows.WorkflowID(id), "", "lost by accident"))
		assert.Equal(t, invite.Scheduled, r.statusOf(t, invite.KindReminder, id), "the database still says scheduled")
		r.reconcile(t, time.Hour)
		assert.Equal(t, invite.Scheduled, r.statusOf(t, invite.KindReminder, id), "not a candidate within the grace period")

		r.reconcileUntil(t, invite.KindReminder, id, invite.Sent, grace)
		rem := r.reminder(t, id)
		require.NotNil(t, rem.SentAt)
		assert.True(t, planned.Equal(*rem.ScheduledFor), "the reminder kept its time")
		assert.False(t, rem.SentAt.Before(*planned), "sent at its time or later, never before")
		assert.Equal(t, 1, r.received(t, invite.KindReminder, id))
		assert.Equal(t, 1, r.received(t, invite.KindInvite, id), "the invite is not sent again")
		assert.Equal(t, invite.Sent, r.state(t, id).Status)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			status, err := r.describe(id)
			require.NoError(c, err)
			assert.Equal(c, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, status)
		}, 30*time.Second, 50*time.Millisecond, "the new run did it")

		// Later scans find nothing to do: no second order, no second send.
		r.reconcile(t, grace)
		assert.Equal(t, 1, r.orders(t, id, "restart"))
		assert.Equal(t, 1, r.received(t, invite.KindReminder, id))
	})

	// A reminder whose workflow was deleted from Temporal's store (as with
	// lost state) while it waited: the same.
	t.Run("reminder deleted", func(t *testing.T) {
		t.Parallel()
		id := r.acceptReminded(t, "PT6S")
		_, err := r.c.WorkflowService().DeleteWorkflowExecution(context.Background(), &workflowservice.DeleteWorkflowExecutionRequest{
			Namespace: namespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: workflows.WorkflowID(id)}})
		require.NoError(t, err)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			_, err := r.describe(id)
			var notFound *serviceerror.NotFound
			assert.ErrorAs(c, err, &notFound)
		}, 30*time.Second, 50*time.Millisecond, "the workflow is gone")

		r.reconcileUntil(t, invite.KindReminder, id, invite.Sent, grace)
		assert.Equal(t, 1, r.received(t, invite.KindReminder, id))
		assert.Equal(t, 1, r.received(t, invite.KindInvite, id))
	})

	// A reminder interrupted mid-send together with its workflow: it may
	// have gone out, so it is skipped as delivery_uncertain and nothing is
	// sent or restarted.
	t.Run("reminder sending without a run", func(t *testing.T) {
		t.Parallel()
		a := r.fixed(t, eventfixture.Setting{})
		id := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: time.Now().Add(-2 * time.Hour)})
		_, err := r.db.DB().Exec(`UPDATE events SET reminder_status = 'sending', reminder_scheduled_for = now() - interval '1 hour',
			updated_at = now() - interval '1 hour' WHERE id = $1`, id)
		require.NoError(t, err)
		_, err = r.db.DB().Exec(`INSERT INTO send_attempts (event_id, kind, n, medium, started_at, event_received_at)
			SELECT $1, 'reminder', 1, 'email', now() - interval '1 hour', received_at FROM events WHERE id = $1`, id)
		require.NoError(t, err)

		r.reconcileUntil(t, invite.KindReminder, id, invite.Skipped, grace)
		assert.Equal(t, invite.DeliveryUncertain, r.reminder(t, id).Reason)
		var outcome string
		require.NoError(t, r.db.DB().Get(&outcome, `SELECT outcome FROM send_attempts WHERE event_id = $1 AND kind = 'reminder'`, id))
		assert.Equal(t, "uncertain", outcome)
		assert.Equal(t, invite.Sent, r.state(t, id).Status, "the invite stays sent")
		assert.Zero(t, r.received(t, invite.KindReminder, id))
		assert.Zero(t, r.orders(t, id, ""), "never restarted")
		_, err = r.describe(id)
		assert.Error(t, err, "no run was started")
	})

	// A late reminder whose workflow runs is left to it.
	t.Run("reminder running", func(t *testing.T) {
		t.Parallel()
		id := r.acceptReminded(t, "P1D")
		_, err := r.db.DB().Exec(`UPDATE events SET reminder_scheduled_for = now() - interval '1 hour' WHERE id = $1`, id)
		require.NoError(t, err)
		res := r.reconcile(t, grace)
		assert.GreaterOrEqual(t, res.Running, 1)
		assert.Equal(t, invite.Scheduled, r.statusOf(t, invite.KindReminder, id))
		assert.Zero(t, r.orders(t, id, "restart"))
	})

	// A late invite whose workflow runs is left to it.
	t.Run("running", func(t *testing.T) {
		t.Parallel()
		id := r.accept(t, r.fixed(t, eventfixture.Setting{Delay: "P1D"}))
		r.waitStatus(t, invite.KindInvite, id, invite.Scheduled)
		_, err := r.db.DB().Exec(`UPDATE events SET scheduled_for = now() - interval '1 hour' WHERE id = $1`, id)
		require.NoError(t, err)
		res := r.reconcile(t, grace)
		assert.GreaterOrEqual(t, res.Running, 1)
		assert.Equal(t, invite.Scheduled, r.state(t, id).Status)
		assert.Zero(t, r.orders(t, id, "restart"))
		status, err := r.describe(id)
		require.NoError(t, err)
		assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, status)
	})
}

// The schedule is created once, brought to a new interval, left paused
// when ops paused it, and it runs the reconciler.
func TestEnsureSchedule(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()

	got, err := reconciler.EnsureSchedule(ctx, r.c, 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, reconciler.Created, got)
	got, err = reconciler.EnsureSchedule(ctx, r.c, 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, reconciler.UpToDate, got, "idempotent")

	h := r.c.ScheduleClient().GetHandle(ctx, workflows.ReconcileScheduleID)
	// It runs the reconciler workflow on the invites task queue, and the run succeeds.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		d, err := h.Describe(ctx)
		require.NoError(c, err)
		require.NotEmpty(c, d.Info.RecentActions)
		wf := d.Info.RecentActions[0].StartWorkflowResult
		var res workflows.ReconcileResult
		assert.NoError(c, r.c.GetWorkflow(ctx, wf.WorkflowID, wf.FirstExecutionRunID).Get(ctx, &res))
	}, time.Minute, 200*time.Millisecond)

	require.NoError(t, h.Pause(ctx, client.SchedulePauseOptions{Note: "paused by ops"}))
	got, err = reconciler.EnsureSchedule(ctx, r.c, 10*time.Minute)
	require.NoError(t, err)
	assert.Equal(t, reconciler.Updated, got)
	d, err := h.Describe(ctx)
	require.NoError(t, err)
	assert.True(t, d.Schedule.State.Paused, "a schedule paused by ops stays paused")
	require.Len(t, d.Schedule.Spec.Intervals, 1)
	assert.Equal(t, 10*time.Minute, d.Schedule.Spec.Intervals[0].Every)
	assert.Equal(t, enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, d.Schedule.Policy.Overlap)
	got, err = reconciler.EnsureSchedule(ctx, r.c, 10*time.Minute)
	require.NoError(t, err)
	assert.Equal(t, reconciler.UpToDate, got)

	_, err = reconciler.EnsureSchedule(ctx, r.c, time.Millisecond)
	assert.Error(t, err)
}
