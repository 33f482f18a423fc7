package apiserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/webhook"
)

func TestWebhooksAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()

	created := e.create(t, "/webhooks", map[string]any{"url": "https://hooks.example.com/tp", "events": []string{"invite.sent", "review.created"},
		"description": "orders"})
	id, _ := created["id"].(string)
	assert.True(t, store.ValidID("whk", id), id)
	secret, _ := created["secret"].(string)
	_, err := webhook.ParseSecret(secret)
	require.NoError(t, err, "a Standard Webhooks secret: %q", secret)
	assert.Equal(t, map[string]any{"id": id, "url": "https://hooks.example.com/tp", "events": []any{"invite.sent", "review.created"},
		"description": "orders", "enabled": true, "createdAt": created["createdAt"], "updatedAt": created["createdAt"], "secret": secret}, created)

	// The secret is stored sealed, and opens to the one shown.
	ep, err := e.store.Webhooks.WebhookEndpoint(ctx, e.account, id)
	require.NoError(t, err)
	assert.NotContains(t, string(ep.Secret), secret[len(webhook.SecretPrefix):])
	box, err := webhook.NewSecretBox(secretkey.Derive(testSecretKey, secretkey.WebhookSecret))
	require.NoError(t, err)
	opened, err := box.Open(id, ep.Secret)
	require.NoError(t, err)
	assert.Equal(t, secret, opened)

	// Never shown again.
	got := e.get(t, "/webhooks/"+id)
	require.Equal(t, http.StatusOK, got.status, "%s", got.body)
	assert.NotContains(t, got.object(t), "secret")
	list, next := items(t, e.get(t, "/webhooks"))
	assert.Nil(t, next)
	require.Len(t, list, 1)
	assert.NotContains(t, list[0], "secret")

	// Rotation: a new secret, the old one signing beside it for 24 h.
	rotated := e.do(t, http.MethodPost, "/webhooks/"+id+"/rotate-secret", e.token, nil)
	require.Equal(t, http.StatusOK, rotated.status, "%s", rotated.body)
	newSecret := rotated.object(t)["secret"].(string)
	assert.NotEqual(t, secret, newSecret)
	ep, err = e.store.Webhooks.WebhookEndpoint(ctx, e.account, id)
	require.NoError(t, err)
	opened, err = box.Open(id, ep.Secret)
	require.NoError(t, err)
	assert.Equal(t, newSecret, opened)
	previous, err := box.Open(id, ep.PreviousSecret)
	require.NoError(t, err)
	assert.Equal(t, secret, previous)
	require.NotNil(t, ep.PreviousExpiresAt)
	assert.WithinDuration(t, ep.UpdatedAt.Add(webhook.SecretOverlap), *ep.PreviousExpiresAt, 0)

	// Patch, as a merge patch.
	r := e.do(t, http.MethodPatch, "/webhooks/"+id, e.token, map[string]any{"enabled": false, "description": nil})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	patched := r.object(t)
	assert.Equal(t, false, patched["enabled"])
	assert.Equal(t, "", patched["description"])
	assert.Equal(t, []any{"invite.sent", "review.created"}, patched["events"], "kept")

	for _, tc := range []struct {
		body  string
		field string
	}{
		{`{"events":["invite.sent"]}`, "url"},
		{`{"url":"https://hooks.example.com"}`, "events"},
		{`{"url":"http://hooks.example.com","events":["invite.sent"]}`, "url"},
		{`{"url":"https://127.0.0.1/hooks","events":["invite.sent"]}`, "url"},
		{`{"url":"https://169.254.169.254/","events":["invite.sent"]}`, "url"},
		{`{"url":"https://localhost:8443/","events":["invite.sent"]}`, "url"},
		// IPv4 inside IPv6 and numeric spellings (every form: webhook's TestEveryNonPublicForm).
		{`{"url":"https://[::ffff:0:a9fe:a9fe]/","events":["invite.sent"]}`, "url"},
		{`{"url":"https://[64:ff9b:1::a00:1]/","events":["invite.sent"]}`, "url"},
		{`{"url":"https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/","events":["invite.sent"]}`, "url"},
		{`{"url":"https://2130706433/","events":["invite.sent"]}`, "url"},
		{`{"url":"https://0x7f000001/","events":["invite.sent"]}`, "url"},
		{`{"url":"https://127.1/","events":["invite.sent"]}`, "url"},
		{`{"url":"https://hooks.example.com","events":[]}`, "events"},
		{`{"url":"https://hooks.example.com","events":["invite.opened"]}`, "events[0]"},
		{`{"url":"https://hooks.example.com","events":["invite.sent","invite.sent"]}`, "events[1]"},
		{`{"url":"https://hooks.example.com","events":["invite.sent"],"description":"` + strings.Repeat("x", 501) + `"}`, "description"},
		{`{"url":"https://hooks.example.com","events":["invite.sent"],"secret":"whsec_x"}`, "secret"},
		{`{"url":"https://hooks.example.com","events":["invite.sent"],"enabled":false}`, "enabled"},
	} {
		requireProblem(t, e.do(t, http.MethodPost, "/webhooks", e.token, tc.body), http.StatusBadRequest, tc.field)
	}
	p := requireProblem(t, e.do(t, http.MethodPost, "/webhooks", e.token, `{"url":"https://10.1.2.3/","events":["invite.sent"]}`), http.StatusBadRequest, "url")
	assert.Equal(t, "url: must point to a public address; 10.1.2.3 is a private address", p["detail"], "ValidateURL's message")
	requireProblem(t, e.do(t, http.MethodPatch, "/webhooks/"+id, e.token, `{"url":"ftp://hooks.example.com"}`), http.StatusBadRequest, "url")
	requireProblem(t, e.do(t, http.MethodPatch, "/webhooks/"+id, e.token, `{"events":null}`), http.StatusBadRequest, "events")
	requireProblem(t, e.get(t, "/webhooks/"+id+"/deliveries?status=sent"), http.StatusBadRequest, "status")

	// Deliveries: the endpoint's own, newest first.
	ds, _ := items(t, e.get(t, "/webhooks/"+id+"/deliveries"))
	assert.Empty(t, ds)

	// Tenants: another account sees none of it.
	_, other := e.otherAccount(t)
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/webhooks/" + id},
		{http.MethodPatch, "/webhooks/" + id},
		{http.MethodDelete, "/webhooks/" + id},
		{http.MethodPost, "/webhooks/" + id + "/rotate-secret"},
		{http.MethodGet, "/webhooks/" + id + "/deliveries"},
	} {
		var body any
		if c.method == http.MethodPatch {
			body = `{"enabled":true}`
		}
		requireProblem(t, e.do(t, c.method, c.path, other, body), http.StatusNotFound)
	}
	theirs, _ := items(t, e.do(t, http.MethodGet, "/webhooks", other, nil))
	assert.Empty(t, theirs)

	// Access groups: reading is for every client, changing for full only.
	readonly := e.tokenFor(t, e.account, auth.GroupReadonly)
	assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/webhooks/"+id, readonly, nil).status)
	assert.Equal(t, http.StatusForbidden, e.do(t, http.MethodPost, "/webhooks/"+id+"/rotate-secret", readonly, nil).status)
	assert.Equal(t, http.StatusForbidden, e.do(t, http.MethodDelete, "/webhooks/"+id, readonly, nil).status)

	r = e.do(t, http.MethodDelete, "/webhooks/"+id, e.token, nil)
	assert.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
	requireProblem(t, e.get(t, "/webhooks/"+id), http.StatusNotFound)
	requireProblem(t, e.get(t, "/webhooks/whk-nope"), http.StatusNotFound)
}

// TestWebhookURLsInDevelopment: with WebhookAllowPrivate the API takes
// http and private addresses, as `touchpoint dev` needs for local receivers.
func TestWebhookURLsInDevelopment(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *apiserver.Options) { o.WebhookAllowPrivate = true })
	e.create(t, "/webhooks", map[string]any{"url": "http://127.0.0.1:9000/hooks", "events": []string{"invite.sent"}})
	requireProblem(t, e.do(t, http.MethodPost, "/webhooks", e.token, `{"url":"ftp://127.0.0.1/","events":["invite.sent"]}`),
		http.StatusBadRequest, "url")
}

// TestAPIStateChangesEmitWebhooks: a cancel through the API writes its
// delivery, which the endpoint's deliveries list shows.
func TestAPIStateChangesEmitWebhooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hook := e.create(t, "/webhooks", map[string]any{"url": "https://hooks.example.com/tp", "events": []string{"invite.cancelled"}})
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	accepted := e.do(t, http.MethodPost, "/events", e.token, map[string]any{
		"customer": map[string]any{"email": "ann@example.com"}, "type": "checkout", "channel": map[string]any{"id": e.channel},
		"transaction": map[string]any{"reference": "T-1", "date": "2026-11-22T06:00:00Z"}, "system": "shop", "systemVersion": "1"})
	require.Equal(t, http.StatusAccepted, accepted.status, "%s", accepted.body)
	ev := accepted.object(t)["EventRef"].(string)
	r := e.do(t, http.MethodPost, "/events/"+ev+"/cancel", e.token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)

	ds, _ := items(t, e.get(t, "/webhooks/"+hook["id"].(string)+"/deliveries"))
	require.Len(t, ds, 1)
	assert.Equal(t, map[string]any{"id": ds[0]["id"], "type": "invite.cancelled", "status": "pending", "reason": nil, "attempts": float64(0),
		"lastStatusCode": nil, "lastError": nil, "createdAt": ds[0]["createdAt"], "deliveredAt": nil, "attemptLog": []any{}}, ds[0])
	assert.True(t, store.ValidID("msg", ds[0]["id"].(string)))
	pending, _ := items(t, e.get(t, "/webhooks/"+hook["id"].(string)+"/deliveries?status=pending"))
	assert.Len(t, pending, 1)
	done, _ := items(t, e.get(t, "/webhooks/"+hook["id"].(string)+"/deliveries?status=succeeded"))
	assert.Empty(t, done)
}

// createWebhooks registers the endpoints of the POST /webhooks examples
// (the first one hears of cancelled invites) and returns their ids.
func (r *openAPIRun) createWebhooks(t *testing.T) []string {
	var ids []string
	for _, ex := range r.examples(t, "POST /webhooks") {
		hook := r.success(t, "POST /webhooks", apiCall{path: "/webhooks", body: jsonText(t, ex.value)}, ex.name)
		ids = append(ids, hook["id"].(string))
	}
	require.NotEmpty(t, ids)
	return ids
}

// webhookOperations runs the other webhook operations on the endpoints
// of createWebhooks, after events have given the first one a delivery.
func (r *openAPIRun) webhookOperations(t *testing.T, ids []string) {
	first := "/webhooks/" + ids[0]
	// The newest delivery was tried once, so that its log has an attempt.
	ds, _, err := r.e.store.Webhooks.ListWebhookDeliveries(context.Background(), r.e.account, ids[0], "", store.Page{Limit: 1})
	require.NoError(t, err)
	require.NotEmpty(t, ds, "the examples' cancel was delivered to the first endpoint")
	_, err = r.e.store.Webhooks.RecordWebhookAttempt(context.Background(), ds[0].ID,
		webhookdb.AttemptResult{StatusCode: 503, Error: "503 Service Unavailable", Took: 177 * time.Millisecond})
	require.NoError(t, err)
	deliveries := r.success(t, "GET /webhooks/{id}/deliveries", apiCall{path: first + "/deliveries"}, "")
	require.NotEmpty(t, asList(deliveries["items"]), "the examples' cancel was delivered to the first endpoint")
	r.success(t, "GET /webhooks", apiCall{path: "/webhooks"}, "")
	r.success(t, "GET /webhooks/{id}", apiCall{path: first}, "")
	for _, ex := range r.examples(t, "PATCH /webhooks/{id}") {
		r.success(t, "PATCH /webhooks/{id}", apiCall{path: first, body: jsonText(t, ex.value)}, ex.name)
	}
	r.success(t, "POST /webhooks/{id}/rotate-secret", apiCall{path: first + "/rotate-secret"}, "")
	// The delivery, given up when the endpoint was disabled, is sent
	// again once it is enabled.
	for _, enabled := range []bool{false, true} {
		res := r.e.do(t, http.MethodPatch, first, r.e.token, map[string]any{"enabled": enabled})
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	}
	msg := asList(deliveries["items"])[0].(map[string]any)["id"].(string)
	r.success(t, "POST /webhooks/{id}/deliveries/{msg}/retry", apiCall{path: first + "/deliveries/" + msg + "/retry"}, "")
	for _, ex := range r.examples(t, "POST /webhooks/{id}/replay") {
		r.success(t, "POST /webhooks/{id}/replay", apiCall{path: first + "/replay", body: jsonText(t, ex.value)}, ex.name)
	}
	r.success(t, "DELETE /webhooks/{id}", apiCall{path: "/webhooks/" + ids[len(ids)-1]}, "")
}
