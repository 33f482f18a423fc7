package apiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/webhook"
)

// TestWebhookReplayAPI: a failed delivery is retried, a period of them
// replayed; everything else is refused with a clear problem. That the
// replays arrive is webhookstack's TestReplayAfterTheRetriesRanOut.
func TestWebhookReplayAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	hook := e.create(t, "/webhooks", map[string]any{"url": "https://hooks.example.com/tp", "events": []string{webhook.InviteCancelled}})
	id := hook["id"].(string)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})

	// Two deliveries (two cancelled invites), both given up after a
	// failed attempt.
	var msgs []string
	for i := range 2 {
		accepted := e.do(t, http.MethodPost, "/events", e.token, map[string]any{
			"customer": map[string]any{"email": "ann@example.com"}, "type": "checkout", "channel": map[string]any{"id": e.channel},
			"transaction": map[string]any{"reference": fmt.Sprint("T-", i), "date": "2026-11-22T06:00:00Z"}, "system": "shop", "systemVersion": "1"})
		require.Equal(t, http.StatusAccepted, accepted.status, "%s", accepted.body)
		r := e.do(t, http.MethodPost, "/events/"+accepted.object(t)["EventRef"].(string)+"/cancel", e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	}
	ds, _ := items(t, e.get(t, "/webhooks/"+id+"/deliveries"))
	require.Len(t, ds, 2)
	for _, d := range ds {
		msg := d["id"].(string)
		msgs = append(msgs, msg)
		_, err := e.store.Webhooks.RecordWebhookAttempt(ctx, msg, webhookdb.AttemptResult{Error: "connection refused"})
		require.NoError(t, err)
		_, err = e.store.Webhooks.FailWebhookDelivery(ctx, msg, webhookdb.ReasonRetriesExhausted, "retries exhausted")
		require.NoError(t, err)
	}

	r := e.do(t, http.MethodPost, "/webhooks/"+id+"/deliveries/"+msgs[0]+"/retry", e.token, nil)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	got := r.object(t)
	assert.Equal(t, msgs[0], got["id"])
	assert.Equal(t, "pending", got["status"])
	p := requireProblem(t, e.do(t, http.MethodPost, "/webhooks/"+id+"/deliveries/"+msgs[0]+"/retry", e.token, nil), http.StatusConflict)
	assert.Contains(t, p["detail"], "only a failed delivery can be retried")

	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	r = e.do(t, http.MethodPost, "/webhooks/"+id+"/replay", e.token, map[string]any{"since": since, "status": "failed", "dryRun": true})
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	assert.Equal(t, map[string]any{"replayed": float64(1), "dryRun": true}, r.object(t))
	r = e.do(t, http.MethodPost, "/webhooks/"+id+"/replay", e.token, map[string]any{"since": since})
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	assert.Equal(t, map[string]any{"replayed": float64(1), "dryRun": false}, r.object(t))
	pending, _ := items(t, e.get(t, "/webhooks/"+id+"/deliveries?status=pending"))
	assert.Len(t, pending, 2, "both back in the outbox")

	// Bad input. The period is 31 days at most: to until, or to now
	// without one (as in `touchpoint webhooks replay`).
	at := func(ago time.Duration) string { return time.Now().Add(-ago).UTC().Format(time.RFC3339) }
	recent := `{"since":"` + at(time.Hour) + `"}`
	for _, tc := range []struct {
		body  string
		field string
	}{
		{`{}`, "since"},
		{`{"since":"yesterday"}`, "since"},
		{`{"since":"2026-11-20T00:00:00Z","until":"2026-11-19T00:00:00Z"}`, "until"},
		{`{"since":"2026-10-01T00:00:00Z","until":"2026-11-19T00:00:00Z"}`, "until"},
		{`{"since":"` + at(745*time.Hour) + `"}`, "since"},
		{`{"since":"` + at(time.Hour) + `","status":"succeeded"}`, "status"},
		{`{"since":"` + at(time.Hour) + `","status":"</script>"}`, "status"},
		{`{"since":"` + at(time.Hour) + `","endpoint":"whk-x"}`, "endpoint"},
		{`{"since":"` + at(time.Hour) + `","dryRun":"yes"}`, "dryRun"},
	} {
		requireProblem(t, e.do(t, http.MethodPost, "/webhooks/"+id+"/replay", e.token, tc.body), http.StatusBadRequest, tc.field)
	}
	r = e.do(t, http.MethodPost, "/webhooks/"+id+"/replay", e.token, `{"since":"`+at(743*time.Hour)+`","dryRun":true}`)
	assert.Equal(t, http.StatusAccepted, r.status, "31 days less an hour: %s", r.body)
	requireProblem(t, e.do(t, http.MethodPost, "/webhooks/"+id+"/replay", e.token, `[`), http.StatusBadRequest)
	requireProblem(t, e.do(t, http.MethodPost, "/webhooks/"+id+"/deliveries/msg-nope/retry", e.token, nil), http.StatusNotFound)
	requireProblem(t, e.do(t, http.MethodPost, "/webhooks/"+id+"/deliveries/"+store.NewID("msg")+"/retry", e.token, nil), http.StatusNotFound)
	requireProblem(t, e.do(t, http.MethodPost, "/webhooks/whk-nope/replay", e.token, recent), http.StatusNotFound)

	// Tenants and access groups.
	_, other := e.otherAccount(t)
	requireProblem(t, e.do(t, http.MethodPost, "/webhooks/"+id+"/deliveries/"+msgs[1]+"/retry", other, nil), http.StatusNotFound)
	requireProblem(t, e.do(t, http.MethodPost, "/webhooks/"+id+"/replay", other, recent), http.StatusNotFound)
	readonly := e.tokenFor(t, e.account, auth.GroupReadonly)
	assert.Equal(t, http.StatusForbidden, e.do(t, http.MethodPost, "/webhooks/"+id+"/replay", readonly, recent).status)
	assert.Equal(t, http.StatusForbidden, e.do(t, http.MethodPost, "/webhooks/"+id+"/deliveries/"+msgs[1]+"/retry", readonly, nil).status)

	// A disabled endpoint is enabled first.
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPatch, "/webhooks/"+id, e.token, `{"enabled":false}`).status)
	p = requireProblem(t, e.do(t, http.MethodPost, "/webhooks/"+id+"/replay", e.token, map[string]any{"since": since}), http.StatusConflict)
	assert.Contains(t, p["detail"], "enable it")
	requireProblem(t, e.do(t, http.MethodPost, "/webhooks/"+id+"/deliveries/"+msgs[1]+"/retry", e.token, nil), http.StatusConflict)
}
