package starter_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"

	"github.com/touchpoint/touchpoint/internal/tcpproxy"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/starter"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/workflows"
)

// temporalAddr is the frontend of the package's Temporal server (a dev
// server in a helper process, so the tests run under -race without
// linking it). Tests share it and keep apart by their own databases, accounts
// and (random) event IDs. No worker runs: started workflows stay open
// until a test terminates them.
var temporalAddr string

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := testtemporal.New(ctx, testtemporal.Options{SearchAttributes: workflows.SearchAttributes(), LogLevel: "error"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start temporal:", err)
		return 1
	}
	defer srv.Stop()
	temporalAddr = srv.Address()
	return m.Run()
}

// TestStartsAcceptedEventsWhenNotified: each accepted event gets its
// workflow, as docs/architecture.md describes it, moments after the NOTIFY —
// the sweep is an hour away, so only the notification explains it.
func TestStartsAcceptedEventsWhenNotified(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.starter(e.temporal)
	s.Sweep = time.Hour
	notifier := starter.NewNotifier(e.st.Events, e.logger)
	run(t, notifier.Run)
	run(t, s.Run)

	// The starter's first drain may find this one; once it is started the
	// starter is listening and idle, and only a NOTIFY can wake it.
	warmup := e.accept(t, 1)
	notifier.Poke()
	e.waitDone(t, warmup, 30*time.Second)

	begin := time.Now()
	ids := e.accept(t, 5)
	notifier.Poke()
	e.waitDone(t, ids, 15*time.Second)
	t.Logf("5 workflows started %v after the NOTIFY (sweep: %v)", time.Since(begin).Round(time.Millisecond), s.Sweep)

	for _, r := range e.rows(t) {
		assert.True(t, r.Done, r.EventID)
		assert.Equal(t, 1, r.Attempts, r.EventID)
		assert.False(t, r.LastError.Valid, r.EventID)
	}
	for i, id := range append(warmup, ids...) {
		d := e.describe(t, id, "")
		info := d.GetWorkflowExecutionInfo()
		assert.Equal(t, workflows.WorkflowID(id), info.GetExecution().GetWorkflowId())
		assert.Equal(t, workflows.TaskQueue, info.GetTaskQueue())
		assert.Equal(t, workflows.WorkflowType, info.GetType().GetName())
		assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, info.GetStatus())
		assert.Equal(t, map[string]string{
			workflows.AccountIDKey.GetName():         e.accountID,
			workflows.EventTypeIDKey.GetName():       e.eventTypeID,
			workflows.ChannelIDKey.GetName():         e.channelID,
			workflows.InviteStatusKey.GetName():      string(invite.Pending),
			workflows.CustomerReferenceKey.GetName(): e.customerRef(t, id),
		}, searchAttributes(t, d))
		assert.Equal(t, fmt.Sprintf("Invite for %q event %s", e.typeName, id), summary(t, d))

		in, raw := e.startInput(t, id, info.GetExecution().GetRunId())
		assert.Equal(t, workflows.InviteInput{
			EventID: id, AccountID: e.accountID, EventTypeID: e.eventTypeID, ChannelID: e.channelID,
			CustomerReference: e.customerRef(t, id),
		}, in)
		assert.NotContains(t, raw, "@example.com", "no customer email in Temporal, event %d", i)
	}
	assert.Empty(t, e.logs.warnings())
}

// TestConcurrentStartersStartEachWorkflowOnce: two starters on one
// database (two API replicas) share a backlog without starting anything
// twice or reporting a failure.
func TestConcurrentStartersStartEachWorkflowOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.accept(t, 50)

	calls := &countingClient{Client: e.temporal}
	var starters [2]*countingClient
	for i := range starters {
		starters[i] = &countingClient{Client: calls}
		s := e.starter(starters[i])
		s.BatchSize, s.Concurrency = 5, 4
		run(t, s.Run)
	}
	e.waitDone(t, ids, time.Minute)
	t.Logf("starts by starter: %d and %d", starters[0].total(), starters[1].total())

	assert.Equal(t, len(ids), calls.total())
	for _, id := range ids {
		assert.Equal(t, 1, calls.starts(id), "StartWorkflow calls for %s", id)
		assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, e.describe(t, id, "").GetWorkflowExecutionInfo().GetStatus())
	}
	for _, r := range e.rows(t) {
		assert.True(t, r.Done, r.EventID)
		assert.Equal(t, 1, r.Attempts, "%s was tried more than once", r.EventID)
		assert.False(t, r.LastError.Valid, "%s: %s", r.EventID, r.LastError.String)
	}
	assert.Empty(t, e.logs.warnings())
}

// TestCancelledPendingInviteIsNotStarted: an invite cancelled before its
// run began gets none, whether it waited for its first run or
// for a retry; its order is done.
func TestCancelledPendingInviteIsNotStarted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// order leaves the event one pending order and returns the run
		// that must stay its latest ("": none may exist).
		order func(t *testing.T, e *env, id string) (runID string)
	}{
		{"start order", func(*testing.T, *env, string) string { return "" }},
		{"retry order", func(t *testing.T, e *env, id string) string {
			earlier := e.failedRun(t, id)
			_, err := e.st.Invites.RetryInvite(context.Background(), e.accountID, id)
			require.NoError(t, err)
			return earlier
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			ids := e.accept(t, 2)
			cancelled, started := ids[0], ids[1]
			runID := tc.order(t, e, cancelled)
			_, err := e.st.Invites.CancelInvite(context.Background(), e.accountID, cancelled)
			require.NoError(t, err)

			run(t, e.starter(e.temporal).Run)
			e.waitDone(t, ids, 30*time.Second)

			_, err = e.describeErr(cancelled, "")
			if runID == "" {
				var notFound *serviceerror.NotFound
				assert.ErrorAs(t, err, &notFound, "no workflow for the cancelled event")
			} else {
				assert.Equal(t, runID, e.describe(t, cancelled, "").GetWorkflowExecutionInfo().GetExecution().GetRunId(),
					"no retry run for the cancelled invite")
			}
			assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, e.describe(t, started, "").GetWorkflowExecutionInfo().GetStatus())
			assert.Empty(t, e.logs.warnings())
		})
	}
}

// TestTemporalOutage: while the starter cannot reach Temporal, its orders
// are rescheduled with their attempts and last error, none is lost or
// marked done; when Temporal is back they are started.
func TestTemporalOutage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	proxy := tcpproxy.Start(t, temporalAddr)
	tc := dial(t, proxy.Addr())
	proxy.Cut()

	s := e.starter(tc)
	s.StartTimeout = 500 * time.Millisecond
	ids := e.accept(t, 5)
	run(t, s.Run)

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		rows := e.rows(c)
		require.Len(c, rows, len(ids))
		for _, r := range rows {
			assert.False(c, r.Done, r.EventID)
			assert.GreaterOrEqual(c, r.Attempts, 3, "%s: rescheduled again and again", r.EventID)
			assert.NotEmpty(c, r.LastError.String, r.EventID)
		}
	}, 30*time.Second, 20*time.Millisecond)
	pending, _, err := e.st.Events.OutboxBacklog(context.Background())
	require.NoError(t, err)
	assert.Equal(t, len(ids), pending)
	for _, id := range ids {
		_, err := e.describeErr(id, "")
		var notFound *serviceerror.NotFound
		assert.ErrorAs(t, err, &notFound, id)
	}
	assert.NotEmpty(t, e.logs.warnings(), "the failed starts are logged")

	require.NoError(t, proxy.Restore())
	e.waitDone(t, ids, time.Minute)
	for _, r := range e.rows(t) {
		assert.False(t, r.LastError.Valid, "a done order keeps no error: %s", r.EventID)
	}
	for _, id := range ids {
		assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, e.describe(t, id, "").GetWorkflowExecutionInfo().GetStatus())
	}
}

// TestRetryWaitsForEarlierRunToClose: a retry order starts a new run with
// Retry set once the earlier run has closed; until then it is tried again
// later, never dropped.
func TestRetryWaitsForEarlierRunToClose(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	notifier := starter.NewNotifier(e.st.Events, e.logger)
	run(t, notifier.Run)
	run(t, e.starter(e.temporal).Run)

	ids := e.accept(t, 1)
	id := ids[0]
	notifier.Poke()
	e.waitDone(t, ids, 30*time.Second)
	earlier := e.describe(t, id, "").GetWorkflowExecutionInfo().GetExecution().GetRunId()

	// The invite failed, as its run records before it ends — but the run
	// has not closed yet.
	e.setStatus(t, id, invite.Failed)
	_, err := e.st.Invites.RetryInvite(ctx, e.accountID, id)
	require.NoError(t, err)
	notifier.Poke()

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		r := e.row(c, id, "retry")
		assert.False(c, r.Done)
		assert.GreaterOrEqual(c, r.Attempts, 2, "tried again")
		assert.Contains(c, r.LastError.String, "already")
	}, 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, earlier, e.describe(t, id, "").GetWorkflowExecutionInfo().GetExecution().GetRunId())

	require.NoError(t, e.temporal.TerminateWorkflow(ctx, id, earlier, "test: the earlier run ends"))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.True(c, e.row(c, id, "retry").Done)
	}, 30*time.Second, 20*time.Millisecond)

	d := e.describe(t, id, "")
	info := d.GetWorkflowExecutionInfo()
	retryRun := info.GetExecution().GetRunId()
	assert.NotEqual(t, earlier, retryRun, "a new run")
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, info.GetStatus())
	assert.Equal(t, workflows.TaskQueue, info.GetTaskQueue())
	assert.Equal(t, fmt.Sprintf("Retry: Invite for %q event %s", e.typeName, id), summary(t, d))
	in, _ := e.startInput(t, id, retryRun)
	assert.True(t, in.Retry)
	assert.Equal(t, id, in.EventID)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED,
		e.describe(t, id, earlier).GetWorkflowExecutionInfo().GetStatus())
	assert.Equal(t, string(invite.Pending), searchAttributes(t, d)[workflows.InviteStatusKey.GetName()])
}

// TestShutdownHandsBatchBack: a starter stopped in the middle of a batch
// marks nothing done — not even the starts it made — and leaves the rows
// untouched; the next starter finishes them, counting the runs that exist
// as started.
func TestShutdownHandsBatchBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := e.accept(t, 10)

	gate := &gatedClient{Client: e.temporal, allow: 3, blocked: make(chan struct{})}
	s := e.starter(gate)
	s.BatchSize, s.Concurrency, s.StartTimeout, s.Sweep = len(ids), 1, time.Minute, time.Hour
	stop := run(t, s.Run)
	select {
	case <-gate.blocked: // three started, the fourth hangs
	case <-time.After(30 * time.Second):
		t.Fatal("the starter did not reach the fourth start")
	}
	stop()

	started := gate.startedIDs()
	require.Len(t, started, 3)
	for _, r := range e.rows(t) {
		assert.False(t, r.Done, "%s marked done by a stopped starter", r.EventID)
		assert.Zero(t, r.Attempts, "%s: handed back untouched", r.EventID)
		assert.False(t, r.LastError.Valid, r.EventID)
	}
	runIDs := map[string]string{}
	for _, id := range started {
		runIDs[id] = e.describe(t, id, "").GetWorkflowExecutionInfo().GetExecution().GetRunId()
	}

	calls := &countingClient{Client: e.temporal}
	run(t, e.starter(calls).Run)
	e.waitDone(t, ids, 30*time.Second)
	for _, id := range ids {
		assert.Equal(t, 1, calls.starts(id), id)
	}
	for id, runID := range runIDs {
		assert.Equal(t, runID, e.describe(t, id, "").GetWorkflowExecutionInfo().GetExecution().GetRunId(),
			"%s: the run started before the shutdown is the one", id)
	}
	assert.Empty(t, e.logs.warnings())
}

// TestOrderWhoseRunExists: a starter that started a run and stopped
// before marking its order done leaves the order to the next one. That
// one finds the run and marks the order done, whatever became of the run
// meanwhile — it starts no second run.
func TestOrderWhoseRunExists(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// crash leaves one pending order for the event whose run exists,
		// and returns that run.
		crash func(t *testing.T, e *env, id string) (runID string)
	}{
		{"start order, run open", func(t *testing.T, e *env, id string) string {
			return e.startRun(t, id, false)
		}},
		{"start order, run failed", func(t *testing.T, e *env, id string) string {
			runID := e.startRun(t, id, false)
			e.setStatus(t, id, invite.Failed)
			require.NoError(t, e.temporal.TerminateWorkflow(context.Background(), id, runID, "test: the run failed"))
			return runID
		}},
		{"retry order, run open", func(t *testing.T, e *env, id string) string {
			e.failedRun(t, id)
			_, err := e.st.Invites.RetryInvite(context.Background(), e.accountID, id)
			require.NoError(t, err)
			runID := e.startRun(t, id, true)
			e.setStatus(t, id, invite.Scheduled) // the run's first step
			return runID
		}},
		{"retry order, run failed", func(t *testing.T, e *env, id string) string {
			e.failedRun(t, id)
			_, err := e.st.Invites.RetryInvite(context.Background(), e.accountID, id)
			require.NoError(t, err)
			runID := e.startRun(t, id, true)
			e.setStatus(t, id, invite.Failed)
			require.NoError(t, e.temporal.TerminateWorkflow(context.Background(), id, runID, "test: the retry failed"))
			return runID
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			ids := e.accept(t, 1)
			id := ids[0]
			runID := tc.crash(t, e, id)

			run(t, e.starter(e.temporal).Run)
			e.waitDone(t, ids, 30*time.Second)
			assert.Equal(t, runID, e.describe(t, id, "").GetWorkflowExecutionInfo().GetExecution().GetRunId(),
				"no second run")
			assert.Empty(t, e.logs.warnings())
		})
	}
}

// env is one test's database with an account and event type, a Temporal
// client and the log the starters write.
type env struct {
	st       *store.Store
	dbURL    string
	temporal client.Client // straight to the server

	accountID, channelID, eventTypeID, typeName string

	logs   *logBuffer
	logger *slog.Logger
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	dbURL := testdb.NewURL(t)
	db, err := store.Open(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = schema.Migrate(ctx, db)
	require.NoError(t, err)
	st := storeset.New(db, "PT10S")

	acc, ch, err := st.Accounts.CreateAccount(ctx, t.Name())
	require.NoError(t, err)
	et, err := st.Accounts.CreateEventType(ctx, acc.ID, "checkout", true)
	require.NoError(t, err)

	logs := &logBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("starter logs:\n%s", logs)
		}
	})
	return &env{
		st: st, dbURL: dbURL, temporal: dial(t, temporalAddr),
		accountID: acc.ID, channelID: ch.ID, eventTypeID: et.ID, typeName: et.Name,
		logs: logs, logger: slog.New(slog.NewJSONHandler(logs, nil)),
	}
}

// starter returns a starter on the test database with quick retries and
// sweeps; tests change what they need.
func (e *env) starter(tc client.Client) *starter.Starter {
	return &starter.Starter{
		Outbox: e.st.Events, Temporal: tc, Logger: e.logger, DatabaseURL: e.dbURL,
		Tuning: starter.Tuning{Sweep: 50 * time.Millisecond, BatchSize: 10, Concurrency: 4, StartTimeout: 10 * time.Second,
			MinBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond},
	}
}

// accept accepts n events and returns their IDs.
func (e *env) accept(t *testing.T, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		email := fmt.Sprintf("customer-%d@example.com", i)
		acc, err := e.st.Events.AcceptEvent(context.Background(), eventdb.NewEvent{
			AccountID: e.accountID, Type: e.typeName, ChannelID: e.channelID,
			CustomerEmail: email, CustomerReference: fmt.Sprintf("cust-%d", i),
			TransactionReference: fmt.Sprintf("order-%d", i),
			TransactionDate:      time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
			Payload:              json.RawMessage(fmt.Sprintf(`{"customer":{"email":%q}}`, email)),
		})
		require.NoError(t, err)
		ids[i] = acc.EventID
	}
	return ids
}

func (e *env) customerRef(t *testing.T, id string) string {
	t.Helper()
	var ref string
	require.NoError(t, e.st.DB().Get(&ref, `SELECT customer_reference FROM events WHERE id = $1`, id))
	return ref
}

// setStatus sets an invite's status as a workflow step would.
func (e *env) setStatus(t *testing.T, id string, status invite.Status) {
	t.Helper()
	_, err := e.st.DB().Exec(`UPDATE events SET invite_status = $2 WHERE id = $1`, id, status)
	require.NoError(t, err)
}

// startRun starts the event's workflow as a starter does, without touching
// its outbox order (a starter that stops right after the start).
func (e *env) startRun(t *testing.T, id string, retry bool) (runID string) {
	t.Helper()
	in := workflows.InviteInput{EventID: id, AccountID: e.accountID, EventTypeID: e.eventTypeID, ChannelID: e.channelID, Retry: retry}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := e.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.WorkflowID(id), TaskQueue: workflows.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
		TypedSearchAttributes: workflows.StartSearchAttributes(in),
	}, workflows.WorkflowType, in)
	require.NoError(t, err)
	return r.GetRunID()
}

// failedRun gives the event a first run that failed, its start order
// done: the state a retry is ordered in.
func (e *env) failedRun(t *testing.T, id string) (runID string) {
	t.Helper()
	runID = e.startRun(t, id, false)
	_, err := e.st.DB().Exec(`UPDATE outbox SET done_at = now(), attempts = 1 WHERE event_id = $1 AND kind = 'start'`, id)
	require.NoError(t, err)
	e.setStatus(t, id, invite.Failed)
	require.NoError(t, e.temporal.TerminateWorkflow(context.Background(), id, runID, "test: the invite failed"))
	return runID
}

type outboxRow struct {
	EventID   string         `db:"event_id"`
	Kind      string         `db:"kind"`
	Attempts  int            `db:"attempts"`
	LastError sql.NullString `db:"last_error"`
	Done      bool           `db:"done"`
}

func (e *env) rows(t require.TestingT) []outboxRow {
	var rows []outboxRow
	err := e.st.DB().Select(&rows, `SELECT event_id, kind, attempts, last_error, done_at IS NOT NULL AS done FROM outbox ORDER BY id`)
	require.NoError(t, err)
	return rows
}

func (e *env) row(t require.TestingT, eventID, kind string) outboxRow {
	var r outboxRow
	err := e.st.DB().Get(&r, `SELECT event_id, kind, attempts, last_error, done_at IS NOT NULL AS done
		FROM outbox WHERE event_id = $1 AND kind = $2`, eventID, kind)
	require.NoError(t, err)
	return r
}

// waitDone waits until every order of the events is done.
func (e *env) waitDone(t *testing.T, ids []string, within time.Duration) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var open []string
		err := e.st.DB().Select(&open, `SELECT event_id FROM outbox WHERE event_id = ANY($1) AND done_at IS NULL`, pq.Array(ids))
		require.NoError(c, err)
		assert.Empty(c, open, "orders not done")
	}, within, 20*time.Millisecond)
}

func (e *env) describeErr(id, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return e.temporal.DescribeWorkflowExecution(ctx, workflows.WorkflowID(id), runID)
}

func (e *env) describe(t *testing.T, id, runID string) *workflowservice.DescribeWorkflowExecutionResponse {
	t.Helper()
	d, err := e.describeErr(id, runID)
	require.NoError(t, err)
	return d
}

// startInput decodes the input a run was started with; raw is its JSON.
func (e *env) startInput(t *testing.T, id, runID string) (in workflows.InviteInput, raw string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := e.temporal.GetWorkflowHistory(ctx, workflows.WorkflowID(id), runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	require.True(t, h.HasNext())
	ev, err := h.Next()
	require.NoError(t, err)
	payloads := ev.GetWorkflowExecutionStartedEventAttributes().GetInput()
	require.Len(t, payloads.GetPayloads(), 1)
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(payloads, &in))
	return in, string(payloads.GetPayloads()[0].GetData())
}

func searchAttributes(t *testing.T, d *workflowservice.DescribeWorkflowExecutionResponse) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, p := range d.GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields() {
		if !strings.HasPrefix(name, "Touchpoint") {
			continue
		}
		var v string
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &v), name)
		out[name] = v
	}
	return out
}

func summary(t *testing.T, d *workflowservice.DescribeWorkflowExecutionResponse) string {
	t.Helper()
	var s string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(d.GetExecutionConfig().GetUserMetadata().GetSummary(), &s))
	return s
}

func dial(t *testing.T, hostPort string) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort: hostPort,
		Logger:   sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// run runs fn until the returned stop (or the test's end) cancels it, and
// checks that it then returns nil promptly.
func run(t *testing.T, fn func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				assert.NoError(t, err)
			case <-time.After(30 * time.Second):
				t.Error("still running 30 s after its context was cancelled")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// countingClient counts StartWorkflow calls per workflow ID.
type countingClient struct {
	client.Client
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingClient) ExecuteWorkflow(ctx context.Context, o client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[o.ID]++
	c.mu.Unlock()
	return c.Client.ExecuteWorkflow(ctx, o, wf, args...)
}

func (c *countingClient) starts(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[id]
}

func (c *countingClient) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.calls {
		n += v
	}
	return n
}

// gatedClient lets allow starts through, then hangs every further one
// until its context ends; blocked is closed when the first one hangs.
type gatedClient struct {
	client.Client
	allow   int64
	blocked chan struct{}

	calls   atomic.Int64
	once    sync.Once
	mu      sync.Mutex
	started []string
}

func (g *gatedClient) ExecuteWorkflow(ctx context.Context, o client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if g.calls.Add(1) > g.allow {
		g.once.Do(func() { close(g.blocked) })
		<-ctx.Done()
		return nil, ctx.Err()
	}
	r, err := g.Client.ExecuteWorkflow(ctx, o, wf, args...)
	if err == nil {
		g.mu.Lock()
		g.started = append(g.started, o.ID)
		g.mu.Unlock()
	}
	return r, err
}

func (g *gatedClient) startedIDs() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.started...)
}

// logBuffer collects JSON log lines from any goroutine.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// warnings are the logged records at WARN or above.
func (b *logBuffer) warnings() []string {
	var out []string
	for line := range strings.Lines(b.String()) {
		var rec struct{ Level string }
		if json.Unmarshal([]byte(line), &rec) == nil && (rec.Level == "WARN" || rec.Level == "ERROR") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}
