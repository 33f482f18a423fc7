package webhookstack_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/webhook"
	"github.com/touchpoint/touchpoint/workflows"
)

const wait = 30 * time.Second

// fast are delivery retries for tests: the production schedule (10 s,
// doubling to 1 h, for 3 days) in miniature.
var fast = stackOptions{AttemptTimeout: 500 * time.Millisecond,
	Workflow: workflows.WebhookOptions{InitialInterval: 100 * time.Millisecond, MaxInterval: 200 * time.Millisecond}}

// TestWebhooksEndToEnd follows an event through the real API and workers
// to receivers that verify every signature with the Standard Webhooks
// reference library.
func TestWebhooksEndToEnd(t *testing.T) {
	t.Parallel()
	s := newStack(t, fast)

	t.Run("an invite's life, a review and a suppression, signed", func(t *testing.T) {
		rc := newReceiver(t)
		hook, secret := s.webhook(t, rc.URL, webhook.EventTypes()...)
		rc.trust(t, secret)

		ev := s.event(t, "jane.doe@example.com", "C-100")
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Len(c, rc.ofType(webhook.InviteScheduled), 1)
			assert.Len(c, rc.ofType(webhook.InviteSent), 1)
		}, wait, 20*time.Millisecond)
		sent := rc.ofType(webhook.InviteSent)[0]
		assert.Equal(t, ev, sent.Data["eventId"])
		assert.Equal(t, "C-100", sent.Data["customerReference"])
		assert.Equal(t, "sent", sent.Data["status"])

		// The customer reviews on the public page: review.created.
		link, err := url.Parse(s.feedback.URL(ev))
		require.NoError(t, err)
		form := url.Values{"event": {ev}, "sig": {link.Query().Get("sig")}, "rating": {"4"}, "comment": {"Quick delivery"}}
		res, err := http.PostForm(s.api.URL+"/feedback", form)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		// The shop suppresses the address: suppression.created.
		s.call(t, http.MethodPost, "/suppressions", map[string]any{"address": "jane.doe@example.com"}, http.StatusCreated)

		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Len(c, rc.ofType(webhook.ReviewCreated), 1)
			assert.Len(c, rc.ofType(webhook.SuppressionCreated), 1)
		}, wait, 20*time.Millisecond)
		review := rc.ofType(webhook.ReviewCreated)[0]
		assert.EqualValues(t, 4, review.Data["rating"])
		assert.Equal(t, "Quick delivery", review.Data["comment"])
		assert.Equal(t, "C-100", review.Data["customerReference"])

		reqs := rc.requests()
		assert.Len(t, reqs, 4, "one request per state change")
		for _, r := range reqs {
			assert.NoError(t, r.VerifyErr, "%s: verified by the reference library", r.Type)
			noPII(t, r.Body)
		}
		// Each attempt is recorded once its answer is in: wait for the last.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			ds := s.deliveries(t, hook)
			if assert.Len(c, ds, 4) {
				for _, d := range ds {
					assert.Equal(c, "succeeded", d["status"])
					assert.EqualValues(c, 1, d["attempts"])
					assert.NotNil(c, d["deliveredAt"])
				}
			}
		}, wait, 20*time.Millisecond)
	})

	t.Run("a receiver that fails and recovers gets the same webhook-id", func(t *testing.T) {
		rc := newReceiver(t)
		hook, secret := s.webhook(t, rc.URL, webhook.InviteScheduled)
		rc.trust(t, secret)
		rc.respond(func(n int, w http.ResponseWriter, _ *http.Request) {
			if n < 2 {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusOK)
		})
		s.event(t, "ann@example.com", "C-200")

		require.EventuallyWithT(t, func(c *assert.CollectT) {
			ds := s.deliveries(t, hook)
			if assert.Len(c, ds, 1) {
				assert.Equal(c, "succeeded", ds[0]["status"])
			}
		}, wait, 20*time.Millisecond)
		reqs := rc.requests()
		require.Len(t, reqs, 3)
		for _, r := range reqs {
			assert.Equal(t, reqs[0].ID, r.ID, "the same webhook-id on every retry")
			assert.Equal(t, reqs[0].Body, r.Body, "the same body")
			assert.NoError(t, r.VerifyErr)
		}
		d := s.deliveries(t, hook)[0]
		assert.Equal(t, reqs[0].ID, d["id"])
		assert.EqualValues(t, 3, d["attempts"])
		assert.EqualValues(t, 200, d["lastStatusCode"])
	})

	t.Run("410 Gone disables the endpoint", func(t *testing.T) {
		rc := newReceiver(t)
		hook, secret := s.webhook(t, rc.URL, webhook.InviteScheduled, webhook.InviteSent)
		rc.trust(t, secret)
		rc.respond(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) })
		s.event(t, "bo@example.com", "C-300")

		require.EventuallyWithT(t, func(c *assert.CollectT) {
			ep := s.call(t, http.MethodGet, "/webhooks/"+hook, nil, http.StatusOK)
			assert.Equal(c, false, ep["enabled"])
			for _, d := range s.deliveries(t, hook) {
				assert.Equal(c, "failed", d["status"])
			}
		}, wait, 20*time.Millisecond)
		n := len(rc.requests())
		assert.LessOrEqual(t, n, 2, "no retry after a 410")
		gone := s.deliveries(t, hook)
		var answered410 bool
		for _, d := range gone {
			if d["lastStatusCode"] == float64(410) {
				answered410 = true
			}
		}
		assert.True(t, answered410)

		// A later change is not sent to it: it is kept, failed, for a
		// replay once the endpoint is enabled again.
		other := newReceiver(t)
		_, otherSecret := s.webhook(t, other.URL, webhook.InviteSent)
		other.trust(t, otherSecret)
		later := s.event(t, "bo2@example.com", "C-301")
		// Wait for this event's own invite.sent (C-300's may arrive first):
		// an endpoint created by a later subtest must not see its messages.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			var seen bool
			for _, r := range other.ofType(webhook.InviteSent) {
				seen = seen || r.Data["eventId"] == later
			}
			assert.True(c, seen, "the later event has gone through")
		}, wait, 20*time.Millisecond)
		seen := map[string]bool{}
		for _, d := range gone {
			seen[d["id"].(string)] = true
		}
		kept := 0
		for _, d := range s.deliveries(t, hook) {
			if !seen[d["id"].(string)] {
				kept++
				assert.Equal(t, "failed", d["status"])
				assert.Equal(t, "endpoint_disabled", d["reason"])
				assert.EqualValues(t, 0, d["attempts"])
			}
		}
		assert.Positive(t, kept, "the later event's invite.sent, at least")
		assert.Equal(t, n, len(rc.requests()), "nothing more sent to a disabled endpoint")
	})

	t.Run("a receiver that hangs times out and is tried again", func(t *testing.T) {
		rc := newReceiver(t)
		hook, secret := s.webhook(t, rc.URL, webhook.InviteScheduled)
		rc.trust(t, secret)
		release := make(chan struct{})
		rc.respond(func(_ int, w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done(): // the client gave up
			case <-release:
				w.WriteHeader(http.StatusNoContent)
			}
		})
		s.event(t, "cy@example.com", "C-400")

		require.EventuallyWithT(t, func(c *assert.CollectT) {
			ds := s.deliveries(t, hook)
			if assert.Len(c, ds, 1) {
				assert.Equal(c, "pending", ds[0]["status"])
				assert.Equal(c, "no answer within 500ms", ds[0]["lastError"])
				assert.GreaterOrEqual(c, ds[0]["attempts"], float64(2), "tried again")
			}
		}, wait, 20*time.Millisecond)
		close(release)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			ds := s.deliveries(t, hook)
			if assert.Len(c, ds, 1) {
				assert.Equal(c, "succeeded", ds[0]["status"])
			}
		}, wait, 20*time.Millisecond)
	})

	t.Run("a disabled endpoint gives up its pending deliveries", func(t *testing.T) {
		rc := newReceiver(t)
		hook, secret := s.webhook(t, rc.URL, webhook.InviteScheduled)
		rc.trust(t, secret)
		rc.respond(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
		s.event(t, "di@example.com", "C-500")
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.GreaterOrEqual(c, len(rc.requests()), 1)
		}, wait, 20*time.Millisecond)

		s.call(t, http.MethodPatch, "/webhooks/"+hook, map[string]any{"enabled": false}, http.StatusOK)
		ds := s.deliveries(t, hook)
		require.Len(t, ds, 1)
		assert.Equal(t, "failed", ds[0]["status"])
		assert.Equal(t, "endpoint disabled", ds[0]["lastError"])
		// Its workflow ends with the delivery failed, without another try.
		run := s.temporal.GetWorkflow(context.Background(), workflows.WebhookWorkflowID(ds[0]["id"].(string), 0), "")
		err := run.Get(context.Background(), nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "webhook not delivered: endpoint disabled")
		n := len(rc.requests())
		desc, err := s.temporal.DescribeWorkflowExecution(context.Background(), run.GetID(), "")
		require.NoError(t, err)
		assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, desc.GetWorkflowExecutionInfo().GetStatus())
		assert.Equal(t, n, len(rc.requests()), "no request after the run ended")
	})

	// The counter is the worker's; the gauges read the backlog from
	// PostgreSQL, where nothing waits any more.
	rec := httptest.NewRecorder()
	s.metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	assert.Contains(t, body, `touchpoint_webhook_deliveries_total{outcome="succeeded"}`)
	assert.Contains(t, body, `touchpoint_webhook_deliveries_total{outcome="gone"}`)
	assert.Contains(t, body, "touchpoint_webhook_pending 0\n")
}

// TestStarterDiedAfterStarting: a starter that started a delivery's
// workflow and died before recording it leaves the row to the next
// starter, whose start Temporal rejects as a duplicate: the row is marked
// started, and the receiver gets the message once.
func TestStarterDiedAfterStarting(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{NoWebhookStarter: true})
	rc := newReceiver(t)
	hook, secret := s.webhook(t, rc.URL, webhook.InviteCancelled)
	rc.trust(t, secret)
	// A scheduled invite, cancelled: the cancel commits invite.cancelled.
	s.call(t, http.MethodPatch, "/invite-settings/"+settingOf(t, s), map[string]any{"delay": "P1D"}, http.StatusOK)
	ev := s.event(t, "eve@example.com", "C-601")
	require.Eventually(t, func() bool {
		st, err := s.st.Invites.LoadInviteState(context.Background(), ev)
		return err == nil && st.Status == "scheduled"
	}, wait, 20*time.Millisecond)
	s.call(t, http.MethodPost, "/events/"+ev+"/cancel", nil, http.StatusOK)

	// The first starter claims the row and starts its workflow, then dies
	// before it records the start: its transaction is rolled back.
	batch, err := s.st.Webhooks.ClaimWebhookStarts(context.Background(), 10)
	require.NoError(t, err)
	require.Len(t, batch.Starts, 1)
	d := batch.Starts[0]
	_, err = s.temporal.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: workflows.WebhookWorkflowID(d.ID, 0), TaskQueue: workflows.WebhookTaskQueue},
		workflows.WebhookWorkflowType, workflows.WebhookInput{DeliveryID: d.ID, EndpointID: d.EndpointID, AccountID: d.AccountID, Type: d.Type})
	require.NoError(t, err)
	require.NoError(t, batch.Release())

	// The next starter finds the row again.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.webhookStarter().Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var started bool
		assert.NoError(c, s.st.DB().Get(&started, `SELECT started_at IS NOT NULL FROM webhook_deliveries WHERE id = $1`, d.ID))
		assert.True(c, started, "recorded as started")
		ds := s.deliveries(t, hook)
		if assert.Len(c, ds, 1) {
			assert.Equal(c, "succeeded", ds[0]["status"])
		}
	}, wait, 20*time.Millisecond)
	reqs := rc.requests()
	require.Len(t, reqs, 1, "one workflow, one delivery")
	assert.Equal(t, d.ID, reqs[0].ID)
	assert.NoError(t, reqs[0].VerifyErr)
}

func settingOf(t *testing.T, s *stack) string {
	t.Helper()
	list := s.call(t, http.MethodGet, "/invite-settings?channelId="+s.channel, nil, http.StatusOK)
	items := list["items"].([]any)
	require.Len(t, items, 1)
	return items[0].(map[string]any)["id"].(string)
}
