package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// delivery makes a delivery of the endpoint as the worker leaves it: three
// attempts answered 500, then given up (status "failed") or answered 204
// ("succeeded").
func (s *site) delivery(t *testing.T, accountID, endpointID, status string, created time.Time) string {
	t.Helper()
	ctx := context.Background()
	id := store.NewID("msg")
	_, err := s.db.Exec(`INSERT INTO webhook_deliveries (id, endpoint_id, account_id, type, payload, created_at, next_start_at, started_at)
		VALUES ($1, $2, $3, 'review.created', '{}', $4, $4, $4)`, id, endpointID, accountID, created)
	require.NoError(t, err)
	for range 3 {
		_, err := s.st.Webhooks.RecordWebhookAttempt(ctx, id, webhookdb.AttemptResult{StatusCode: 500,
			Error: "HTTP 500: upstream down", Took: 120 * time.Millisecond})
		require.NoError(t, err)
	}
	switch status {
	case "failed":
		_, err = s.st.Webhooks.FailWebhookDelivery(ctx, id, webhookdb.ReasonRetriesExhausted, "")
	case "succeeded":
		_, err = s.st.Webhooks.RecordWebhookAttempt(ctx, id, webhookdb.AttemptResult{StatusCode: 204, Delivered: true})
	}
	require.NoError(t, err)
	return id
}

// TestWebhooks: owners add an endpoint and see its secret once, disable,
// enable and rotate it; its deliveries show their attempts and the last
// answer; editors send one failed delivery again or replay a period;
// another account's endpoint is 404.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ctx := context.Background()

	form := url.Values{"url": {"https://hooks.shop-a.example/touchpoint"}, "events": {"review.created", "invite.sent"}}
	assert.Equal(t, http.StatusForbidden, s.post(t, editorA, "/console/webhooks", form).status)
	bad := s.post(t, ownerA, "/console/webhooks", url.Values{"url": {"http://127.0.0.1/x"}})
	assert.Equal(t, http.StatusBadRequest, bad.status)
	assert.NotNil(t, bad.byID("url-error"))
	assert.NotNil(t, bad.byID("events-error"))

	res := s.post(t, ownerA, "/console/webhooks", form)
	require.Equal(t, http.StatusCreated, res.status, res.body)
	shown := text(res.byID("new-secret"))
	require.True(t, strings.HasPrefix(shown, "whsec_"), shown)
	eps, _, err := s.st.Webhooks.ListWebhookEndpoints(ctx, s.a.AccountID, store.Page{Limit: 10})
	require.NoError(t, err)
	require.Len(t, eps, 1)
	ep := eps[0]
	assert.Equal(t, []string{"invite.sent", "review.created"}, []string(ep.Events))
	opened, err := s.secrets.Open(ep.ID, ep.Secret)
	require.NoError(t, err)
	assert.Equal(t, shown, opened, "the secret shown is the one that signs")
	assert.NotContains(t, s.get(t, ownerA, "/console/webhooks").body, shown, "and it is shown once")
	assert.NotContains(t, s.get(t, ownerA, "/console/webhooks/"+ep.ID).body, shown)

	failed := s.delivery(t, s.a.AccountID, ep.ID, "failed", time.Now().Add(-48*time.Hour))
	s.delivery(t, s.a.AccountID, ep.ID, "succeeded", time.Now().Add(-time.Hour))
	p := s.get(t, viewerA, "/console/webhooks/"+ep.ID)
	require.Equal(t, http.StatusOK, p.status)
	list := text(p.byID("deliveries-h").Parent)
	assert.Contains(t, list, "failed retries_exhausted")
	assert.Contains(t, list, "3 attempts · last answer 500")
	assert.Contains(t, list, "HTTP 500: upstream down")
	// Each attempt, with its answer and how long it took: three of each
	// delivery, and the one that succeeded.
	assert.Contains(t, list, "Attempts (3)")
	assert.Contains(t, list, "Attempts (4)")
	assert.Equal(t, 6, strings.Count(list, "answered 500 · 120 ms · HTTP 500: upstream down"), list)
	assert.Contains(t, list, "answered 204 · 0 ms")
	onlyFailed := s.get(t, viewerA, "/console/webhooks/"+ep.ID+"?status=failed")
	assert.NotContains(t, text(onlyFailed.byID("deliveries-h").Parent), "succeeded ·")

	// Retry one, as an editor; a viewer may not.
	retry := "/console/webhooks/" + ep.ID + "/deliveries/" + failed + "/retry"
	assert.Equal(t, http.StatusForbidden, s.post(t, viewerA, retry, nil).status)
	require.Equal(t, http.StatusSeeOther, s.post(t, editorA, retry, nil).status)
	var status string
	require.NoError(t, s.db.Get(&status, `SELECT status FROM webhook_deliveries WHERE id = $1`, failed))
	assert.Equal(t, "pending", status)
	again := s.post(t, editorA, retry, nil)
	assert.Equal(t, http.StatusConflict, again.status, "only a failed delivery is sent again")

	// Disabled, nothing is replayed; enabled, a period is.
	assert.Equal(t, http.StatusForbidden, s.post(t, editorA, "/console/webhooks/"+ep.ID+"/disable", nil).status)
	require.Equal(t, http.StatusSeeOther, s.post(t, ownerA, "/console/webhooks/"+ep.ID+"/disable", nil).status)
	failed2 := s.delivery(t, s.a.AccountID, ep.ID, "failed", time.Now().Add(-2*time.Hour))
	replay := url.Values{"since": {time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)}}
	res = s.post(t, editorA, "/console/webhooks/"+ep.ID+"/replay", replay)
	assert.Equal(t, http.StatusConflict, res.status)
	assert.Contains(t, text(res.elements(func(n *htmlNode) bool { return attr(n, "role") == "alert" })[0]), "enable it")
	require.Equal(t, http.StatusSeeOther, s.post(t, ownerA, "/console/webhooks/"+ep.ID+"/enable", nil).status)
	require.Equal(t, http.StatusSeeOther, s.post(t, editorA, "/console/webhooks/"+ep.ID+"/replay", replay).status)
	require.NoError(t, s.db.Get(&status, `SELECT status FROM webhook_deliveries WHERE id = $1`, failed2))
	assert.Equal(t, "pending", status)
	tooOld := s.post(t, editorA, "/console/webhooks/"+ep.ID+"/replay", url.Values{"since": {"2001-01-01"}})
	assert.Equal(t, http.StatusBadRequest, tooOld.status)
	assert.NotNil(t, tooOld.byID("since-error"))

	// Rotate: a new secret, shown once; the old one signs beside it.
	res = s.post(t, ownerA, "/console/webhooks/"+ep.ID+"/rotate", nil)
	require.Equal(t, http.StatusOK, res.status)
	rotated := text(res.byID("new-secret"))
	assert.NotEqual(t, shown, rotated)
	ep, err = s.st.Webhooks.WebhookEndpoint(ctx, s.a.AccountID, ep.ID)
	require.NoError(t, err)
	opened, err = s.secrets.Open(ep.ID, ep.Secret)
	require.NoError(t, err)
	assert.Equal(t, rotated, opened)
	assert.NotNil(t, ep.PreviousExpiresAt)

	// Another account's endpoint.
	for _, path := range []string{"/console/webhooks/" + ep.ID + "/disable", "/console/webhooks/" + ep.ID + "/rotate", retry} {
		assert.Equal(t, http.StatusNotFound, s.post(t, ownerB, path, nil).status, path)
	}
	assert.Equal(t, http.StatusNotFound, s.get(t, ownerB, "/console/webhooks/"+ep.ID).status)
	ep2, err := s.st.Webhooks.WebhookEndpoint(ctx, s.a.AccountID, ep.ID)
	require.NoError(t, err)
	assert.True(t, ep2.Enabled)
	assert.Equal(t, ep.Secret, ep2.Secret)
}
