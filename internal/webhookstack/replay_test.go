package webhookstack_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/webhook"
	"github.com/touchpoint/touchpoint/workflows"
)

// TestReplayAfterTheRetriesRanOut: an endpoint down past its last retry
// loses nothing. Its failed deliveries, sent again once it is back (one
// by its id, the rest by a replay of the period), arrive with their
// original webhook-id and body, at the endpoint's new URL, with a
// signature that verifies under its new secret.
func TestReplayAfterTheRetriesRanOut(t *testing.T) {
	t.Parallel()
	s := newStack(t, stackOptions{AttemptTimeout: 500 * time.Millisecond,
		Workflow: workflows.WebhookOptions{InitialInterval: 50 * time.Millisecond, MaxInterval: 100 * time.Millisecond, MaxAttempts: 2}})
	down := newReceiver(t)
	down.respond(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	hook, _ := s.webhook(t, down.URL, webhook.InviteScheduled, webhook.InviteSent)
	since := time.Now().Add(-time.Minute)
	for i := range 2 {
		s.event(t, fmt.Sprintf("replay%d@example.com", i), fmt.Sprintf("C-90%d", i))
	}

	// Both retries of each of the four messages fail; they are given up.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		ds := s.deliveries(t, hook)
		if assert.Len(c, ds, 4) {
			for _, d := range ds {
				assert.Equal(c, "failed", d["status"])
			}
		}
	}, wait, 20*time.Millisecond)
	sent := map[string]string{} // webhook-id → body, as first sent
	for _, r := range down.requests() {
		sent[r.ID] = r.Body
	}
	require.Len(t, sent, 4)
	tries := len(down.requests())

	// The shop brings the endpoint back at a new URL, with a new secret.
	up := newReceiver(t)
	s.call(t, http.MethodPatch, "/webhooks/"+hook, map[string]any{"url": up.URL}, http.StatusOK)
	rotated := s.call(t, http.MethodPost, "/webhooks/"+hook+"/rotate-secret", nil, http.StatusOK)
	up.trust(t, rotated["secret"].(string))

	first := s.deliveries(t, hook)[3]["id"].(string) // the oldest
	retried := s.call(t, http.MethodPost, "/webhooks/"+hook+"/deliveries/"+first+"/retry", nil, http.StatusAccepted)
	assert.Equal(t, "pending", retried["status"])
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Len(c, up.requests(), 1)
	}, wait, 20*time.Millisecond)
	assert.Equal(t, first, up.requests()[0].ID)

	replay := s.call(t, http.MethodPost, "/webhooks/"+hook+"/replay",
		map[string]any{"since": since.UTC().Format(time.RFC3339Nano), "status": "failed"}, http.StatusAccepted)
	assert.EqualValues(t, 3, replay["replayed"], "the other three")

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, d := range s.deliveries(t, hook) {
			assert.Equal(c, "succeeded", d["status"])
		}
	}, wait, 20*time.Millisecond)
	got := up.requests()
	require.Len(t, got, 4, "each failed message once")
	for _, r := range got {
		body, ok := sent[r.ID]
		assert.True(t, ok, "%s: an original webhook-id", r.ID)
		assert.Equal(t, body, r.Body, "%s: the original body", r.ID)
		assert.NoError(t, r.VerifyErr, "%s: signed with the endpoint's current secret", r.ID)
	}
	assert.Len(t, down.requests(), tries, "nothing more went to the old URL")
}

// TestChangesWhileDisabledGoOutAfterReplay: what happens while an endpoint
// is disabled is not lost. Each change shows as a delivery failed with
// reason endpoint_disabled, nothing is sent; once the shop enables the
// endpoint, a replay of the period sends every one, signed.
func TestChangesWhileDisabledGoOutAfterReplay(t *testing.T) {
	t.Parallel()
	s := newStack(t, fast)
	rc := newReceiver(t)
	hook, secret := s.webhook(t, rc.URL, webhook.InviteScheduled, webhook.InviteSent)
	rc.trust(t, secret)
	s.call(t, http.MethodPatch, "/webhooks/"+hook, map[string]any{"enabled": false}, http.StatusOK)
	since := time.Now().Add(-time.Minute)

	ev := s.event(t, "while.disabled@example.com", "C-950")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		ds := s.deliveries(t, hook)
		if assert.Len(c, ds, 2, "invite.scheduled and invite.sent") {
			for _, d := range ds {
				assert.Equal(c, "failed", d["status"])
				assert.Equal(c, "endpoint_disabled", d["reason"])
				assert.EqualValues(c, 0, d["attempts"])
			}
		}
	}, wait, 20*time.Millisecond)
	assert.Empty(t, rc.requests(), "a disabled endpoint is called for nothing")

	s.call(t, http.MethodPost, "/webhooks/"+hook+"/replay",
		map[string]any{"since": since.UTC().Format(time.RFC3339Nano), "status": "failed"}, http.StatusConflict)
	s.call(t, http.MethodPatch, "/webhooks/"+hook, map[string]any{"enabled": true}, http.StatusOK)
	replay := s.call(t, http.MethodPost, "/webhooks/"+hook+"/replay",
		map[string]any{"since": since.UTC().Format(time.RFC3339Nano), "status": "failed"}, http.StatusAccepted)
	assert.EqualValues(t, 2, replay["replayed"])

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, d := range s.deliveries(t, hook) {
			assert.Equal(c, "succeeded", d["status"])
			assert.Nil(c, d["reason"])
		}
	}, wait, 20*time.Millisecond)
	got := map[string]string{}
	for _, r := range rc.requests() {
		assert.NoError(t, r.VerifyErr, "%s: verified by the reference library", r.Type)
		assert.Equal(t, ev, r.Data["eventId"])
		got[r.Type] = r.ID
	}
	assert.Len(t, rc.requests(), 2, "each change once")
	assert.Contains(t, got, webhook.InviteScheduled)
	assert.Contains(t, got, webhook.InviteSent)
}
