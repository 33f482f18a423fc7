package worker_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testactivities"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/webhook"
	"github.com/touchpoint/touchpoint/worker"
	"github.com/touchpoint/touchpoint/workflows"
)

// behaviours is a Registry that notes each workflow type's versioning
// behaviour.
type behaviours map[string]workflow.VersioningBehavior

func (b behaviours) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	b[o.Name] = o.VersioningBehavior
}
func (behaviours) RegisterActivity(any)                                      {}
func (behaviours) RegisterActivityWithOptions(any, activity.RegisterOptions) {}

// TestEveryWorkflowTypeStatesItsVersioningBehaviour: a versioned worker
// refuses a workflow type without one, so each must have one; invites
// upgrade, the short runs are pinned.
func TestEveryWorkflowTypeStatesItsVersioningBehaviour(t *testing.T) {
	t.Parallel()
	b := behaviours{}
	worker.Register(b, &activities.Activities{}, workflows.Options{})
	worker.RegisterReconciler(b, &activities.Reconciler{})
	worker.RegisterWebhooks(b, &activities.Webhooks{}, workflows.WebhookOptions{})
	assert.Equal(t, behaviours{
		workflows.WorkflowType:          workflow.VersioningBehaviorAutoUpgrade,
		workflows.TestSendWorkflowType:  workflow.VersioningBehaviorPinned,
		workflows.ReconcileWorkflowType: workflow.VersioningBehaviorPinned,
		workflows.WebhookWorkflowType:   workflow.VersioningBehaviorPinned,
	}, b)
}

// build is one build of the worker: both task queues, versioned.
type build struct {
	id      string
	workers []sdkworker.Worker
}

func startBuild(t *testing.T, c client.Client, id string, acts *activities.Activities, hooks *activities.Webhooks) *build {
	t.Helper()
	sdk := sdkworker.Options{Identity: id}
	b := &build{id: id, workers: []sdkworker.Worker{
		worker.New(c, acts, worker.Options{BuildID: id, Worker: sdk}),
		worker.NewWebhooks(c, hooks, worker.WebhookOptions{BuildID: id, Worker: sdk,
			Workflow: workflows.WebhookOptions{InitialInterval: 200 * time.Millisecond, MaxInterval: 500 * time.Millisecond}}),
	}}
	for _, w := range b.workers {
		require.NoError(t, w.Start())
	}
	t.Cleanup(b.stop)
	return b
}

func (b *build) stop() {
	for _, w := range b.workers {
		w.Stop()
	}
}

// TestTwoBuildsSideBySide runs two builds of the worker against a real
// Temporal server, as a deploy does: build-a first (the deployment's first
// build makes itself current), then build-b beside it, made current.
//
//   - An invite begun on build-a, asleep until its send time, wakes on
//     build-b (AutoUpgrade) and sends there.
//   - A webhook delivery begun on build-a, retrying, keeps to build-a
//     (Pinned) until it is delivered.
//   - New workflows go to build-b, the current version.
//   - build-a drains once its pinned delivery has ended, and can be
//     stopped: work goes on on build-b.
func TestTwoBuildsSideBySide(t *testing.T) {
	t.Parallel()
	srv := testtemporal.Start(t, testtemporal.Options{SearchAttributes: workflows.SearchAttributes()})
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Logger: sdklog.NewStructuredLogger(quietLog())})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	wired := testactivities.New(t)
	db, st, smtp, acts := wired.DB, wired.Store, wired.SMTP, wired.Acts
	box, err := webhook.NewSecretBox(bytes.Repeat([]byte{1}, 32))
	require.NoError(t, err)
	hooks := &activities.Webhooks{Store: st.Webhooks, Secrets: box, Metrics: metrics.New(),
		Client: webhook.NewClient(webhook.Options{AllowPrivate: true})}

	// The endpoint refuses deliveries until the test lets it take them.
	var accept atomic.Bool
	var hookCalls atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hookCalls.Add(1)
		if !accept.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)

	// build-a: the deployment's first build makes itself current.
	a := startBuild(t, c, "build-a", acts, hooks)
	worker.JoinDeployment(ctx, c, a.id, 200*time.Millisecond, quietLog())
	d, err := worker.DescribeDeployment(ctx, c)
	require.NoError(t, err)
	require.Equal(t, a.id, d.Current)

	// On build-a: an invite asleep until its send time, and a delivery
	// that keeps failing.
	sleepy := eventfixture.NewAccount(t, db, eventfixture.Setting{Delay: "PT12S"})
	asleep := startInvite(t, ctx, c, sleepy)
	waitFor(t, ctx, c, asleep, func(h []*historypb.HistoryEvent) bool {
		return hasEvent(h, enumspb.EVENT_TYPE_TIMER_STARTED)
	}, "the invite sleeps")
	delivery := startDelivery(t, ctx, c, st, box, sleepy, receiver.URL)
	require.EventuallyWithT(t, func(col *assert.CollectT) { assert.GreaterOrEqual(col, hookCalls.Load(), int32(2)) },
		30*time.Second, 20*time.Millisecond, "the delivery is retrying")

	// build-b beside it, then made current.
	b := startBuild(t, c, "build-b", acts, hooks)
	worker.JoinDeployment(ctx, c, b.id, 200*time.Millisecond, quietLog()) // not current: it waits to be made so
	d, err = worker.DescribeDeployment(ctx, c)
	require.NoError(t, err)
	require.Equal(t, a.id, d.Current, "a later build does not make itself current")
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		prev, err := worker.SetCurrent(ctx, c, b.id)
		if assert.NoError(col, err) {
			assert.Equal(col, a.id, prev)
		}
	}, 30*time.Second, 200*time.Millisecond, "build-b is made current once Temporal has seen it poll")

	// New work goes to build-b.
	fresh := startInvite(t, ctx, c, eventfixture.NewAccount(t, db, eventfixture.Setting{}))
	waitDone(t, ctx, c, fresh)
	assert.Equal(t, []string{b.id}, taskIdentities(t, ctx, c, fresh), "a new invite runs on the current build")

	// The sleeping invite wakes on build-b and sends there.
	waitDone(t, ctx, c, asleep)
	ids := taskIdentities(t, ctx, c, asleep)
	assert.Equal(t, a.id, ids[0], "it began on build-a")
	assert.Equal(t, b.id, ids[len(ids)-1], "it ended on build-b (AutoUpgrade)")
	assert.Equal(t, []string{b.id}, activityIdentities(t, ctx, c, asleep, workflows.SendActivity), "it sent on build-b")
	assertBehaviour(t, ctx, c, asleep, enumspb.VERSIONING_BEHAVIOR_AUTO_UPGRADE)
	assertBehaviour(t, ctx, c, delivery, enumspb.VERSIONING_BEHAVIOR_PINNED)

	// The delivery keeps to build-a until it is delivered.
	accept.Store(true)
	waitDone(t, ctx, c, delivery)
	assert.Equal(t, []string{a.id}, taskIdentities(t, ctx, c, delivery), "a pinned delivery keeps to build-a")
	for _, id := range activityIdentities(t, ctx, c, delivery, workflows.DeliverWebhookActivity) {
		assert.Equal(t, a.id, id, "every attempt on build-a")
	}

	// build-a drains, and can be stopped: build-b takes every new run.
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		d, err := worker.DescribeDeployment(ctx, c)
		if assert.NoError(col, err) {
			assert.Equal(col, []string{worker.VersionDrained, worker.VersionCurrent}, statuses(d), "%+v", d)
		}
	}, time.Minute, 200*time.Millisecond, "build-a drains")
	a.stop()
	last := startInvite(t, ctx, c, eventfixture.NewAccount(t, db, eventfixture.Setting{}))
	waitDone(t, ctx, c, last)
	assert.Equal(t, []string{b.id}, taskIdentities(t, ctx, c, last))
	assert.Len(t, smtp.Messages(), 3, "one mail per invite")
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func statuses(d worker.Deployment) []string {
	var out []string
	for _, v := range d.Versions {
		out = append(out, v.Status)
	}
	return out
}

// startInvite starts the invite workflow of a new event of the account, as
// the starter does.
func startInvite(t *testing.T, ctx context.Context, c client.Client, a *eventfixture.Account) string {
	t.Helper()
	in := workflows.InviteInput{EventID: a.Event(t, eventfixture.Event{Email: a.AccountID + "@example.com"}), AccountID: a.AccountID,
		EventTypeID: a.EventTypeID, ChannelID: a.ChannelID}
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.WorkflowID(in.EventID), TaskQueue: workflows.TaskQueue,
		TypedSearchAttributes: workflows.StartSearchAttributes(in)}, workflows.WorkflowType, in)
	require.NoError(t, err)
	return workflows.WorkflowID(in.EventID)
}

// startDelivery registers an endpoint at url, schedules an invite (which
// writes its delivery) and starts the delivery's workflow, as the webhook
// starter does.
func startDelivery(t *testing.T, ctx context.Context, c client.Client, st *store.Store, box *webhook.SecretBox, a *eventfixture.Account, url string) string {
	t.Helper()
	secret, err := webhook.NewSecret()
	require.NoError(t, err)
	id := store.NewID("whk")
	sealed, err := box.Seal(id, secret)
	require.NoError(t, err)
	ep, err := st.Webhooks.CreateWebhookEndpoint(ctx, webhookdb.WebhookEndpoint{ID: id, AccountID: a.AccountID, URL: url,
		Events: []string{webhook.InviteScheduled}, Secret: sealed})
	require.NoError(t, err)
	_, err = st.Invites.MarkScheduled(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{Email: "hook-" + a.AccountID + "@example.com"}), time.Now())
	require.NoError(t, err)
	ds, _, err := st.Webhooks.ListWebhookDeliveries(ctx, a.AccountID, ep.ID, webhookdb.DeliveryPending, store.Page{Limit: 1})
	require.NoError(t, err)
	require.Len(t, ds, 1)
	in := workflows.WebhookInput{DeliveryID: ds[0].ID, EndpointID: ep.ID, AccountID: a.AccountID, Type: ds[0].Type}
	wid := workflows.WebhookWorkflowID(in.DeliveryID, 0)
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wid, TaskQueue: workflows.WebhookTaskQueue},
		workflows.WebhookWorkflowType, in)
	require.NoError(t, err)
	return wid
}

func history(t *testing.T, ctx context.Context, c client.Client, id string) []*historypb.HistoryEvent {
	t.Helper()
	var out []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		out = append(out, e)
	}
	return out
}

func hasEvent(h []*historypb.HistoryEvent, typ enumspb.EventType) bool {
	for _, e := range h {
		if e.GetEventType() == typ {
			return true
		}
	}
	return false
}

func waitFor(t *testing.T, ctx context.Context, c client.Client, id string, ok func([]*historypb.HistoryEvent) bool, what string) {
	t.Helper()
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		assert.True(col, ok(history(t, ctx, c, id)), what)
	}, time.Minute, 50*time.Millisecond, what)
}

func waitDone(t *testing.T, ctx context.Context, c client.Client, id string) {
	t.Helper()
	require.NoError(t, c.GetWorkflow(ctx, id, "").Get(ctx, nil), "workflow %s", id)
}

// taskIdentities are the identities (here: the builds) of the workers
// that started each workflow task of a run, without repeats in a row.
func taskIdentities(t *testing.T, ctx context.Context, c client.Client, id string) []string {
	t.Helper()
	var out []string
	for _, e := range history(t, ctx, c, id) {
		if a := e.GetWorkflowTaskStartedEventAttributes(); a != nil && (len(out) == 0 || out[len(out)-1] != a.GetIdentity()) {
			out = append(out, a.GetIdentity())
		}
	}
	return out
}

// activityIdentities are the workers that ran each attempt of an activity
// type that ended.
func activityIdentities(t *testing.T, ctx context.Context, c client.Client, id, activityType string) []string {
	t.Helper()
	h := history(t, ctx, c, id)
	scheduled := map[int64]bool{}
	var out []string
	for _, e := range h {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == activityType {
			scheduled[e.GetEventId()] = true
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] {
			out = append(out, a.GetIdentity())
		}
	}
	return out
}

func assertBehaviour(t *testing.T, ctx context.Context, c client.Client, id string, want enumspb.VersioningBehavior) {
	t.Helper()
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	assert.Equal(t, want, d.GetWorkflowExecutionInfo().GetVersioningInfo().GetBehavior(), id)
}
