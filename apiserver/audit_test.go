package apiserver_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/webhook"
)

func TestAuditTrail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ps := persondb.New(pg.NewDB(e.store.DB()))
	anna, err := ps.CreatePerson(ctx, people.Operator, e.account, "anna@shop.example", people.Owner)
	require.NoError(t, err)
	ben, err := ps.CreatePerson(ctx, people.PersonActor(anna.ID), e.account, "ben@shop.example", people.Viewer)
	require.NoError(t, err)
	_, err = ps.SetRole(ctx, people.PersonActor(anna.ID), e.account, ben.ID, people.Editor)
	require.NoError(t, err)
	other, otherToken := e.otherAccount(t)
	_, err = ps.CreatePerson(ctx, people.Operator, other, "cora@other.example", people.Owner)
	require.NoError(t, err)

	list := func(query string) []map[string]any {
		t.Helper()
		r := e.get(t, "/audit?"+query)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var items []map[string]any
		for _, it := range r.object(t)["items"].([]any) {
			items = append(items, it.(map[string]any))
		}
		return items
	}
	all := list("")
	require.Len(t, all, 4, "the account's lines only")
	assert.Equal(t, persondb.AuditClientCreated, all[3]["action"], "the test's API client, made by the operator")
	assert.Equal(t, "person.role_changed", all[0]["action"])
	assert.Equal(t, anna.ID, all[0]["actor"])
	assert.Equal(t, "anna@shop.example", all[0]["actorEmail"])
	assert.Equal(t, ben.ID, all[0]["target"])
	assert.Equal(t, map[string]any{"from": "viewer", "to": "editor"}, all[0]["detail"])
	assert.Equal(t, "operator", all[2]["actor"])
	assert.Nil(t, all[2]["actorEmail"])

	assert.Len(t, list("actor="+anna.ID), 2)
	assert.Len(t, list("actor=operator"), 2)
	assert.Len(t, list("from="+url.QueryEscape(all[1]["at"].(string))), 2, "from is inclusive")
	assert.Len(t, list("to="+url.QueryEscape(all[1]["at"].(string))), 2, "to is exclusive")

	// Pages of one, through the cursor.
	var seen []any
	q := "limit=1"
	for {
		r := e.get(t, "/audit?"+q).object(t)
		seen = append(seen, r["items"].([]any)...)
		next, _ := r["nextCursor"].(string)
		if next == "" {
			break
		}
		q = "limit=1&cursor=" + url.QueryEscape(next)
	}
	assert.Len(t, seen, 4)

	r := e.do(t, http.MethodGet, "/audit", otherToken, nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Len(t, r.object(t)["items"], 2, "another account sees its own trail only: its client and Cora")

	requireProblem(t, e.get(t, "/audit?actor=anna@shop.example"), http.StatusBadRequest, "actor")
	requireProblem(t, e.get(t, "/audit?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z"), http.StatusBadRequest, "to")
	requireProblem(t, e.get(t, "/audit?from=yesterday"), http.StatusBadRequest, "from")
	requireProblem(t, e.get(t, "/audit?who=me"), http.StatusBadRequest, "who")
	for _, group := range []string{auth.GroupEvents, auth.GroupReadonly} {
		r := e.do(t, http.MethodGet, "/audit", e.tokenFor(t, e.account, group), nil)
		assert.Equal(t, http.StatusForbidden, r.status, "the trail is for full access only, not %s", group)
	}

	// Erasing Anna clears her address from the trail; what she did stays.
	_, err = ps.Erase(ctx, people.Operator, e.account, anna.ID)
	require.NoError(t, err)
	mine := list("actor=" + anna.ID)
	require.Len(t, mine, 2)
	for _, it := range mine {
		assert.Nil(t, it["actorEmail"])
	}
	assert.NotContains(t, string(e.get(t, "/audit").body), "anna@shop.example")
}

// TestEveryChangeNamesItsClient makes each change an API client can make
// and finds it in the audit trail under the client's id, with ids and
// words only: the customer's address a suppression names stays out of it,
// and what the customer did (their review) is not the client's.
func TestEveryChangeNamesItsClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ok := func(r response, status int) {
		t.Helper()
		require.Equal(t, status, r.status, "%s", r.body)
	}
	rev, _ := e.reviewed(t, reviewdb.ReviewInput{Rating: 5, Comment: "warm"})
	types, _ := items(t, e.get(t, "/event-types?name=checkout"))
	etID := types[0]["id"].(string)
	ok(e.do(t, http.MethodPatch, "/event-types/"+etID, e.token, `{"active":true}`), http.StatusOK)
	settings, _ := items(t, e.get(t, "/invite-settings"))
	ok(e.do(t, http.MethodPatch, "/invite-settings/"+settings[0]["id"].(string), e.token, `{"delay":"P3D"}`), http.StatusOK)
	ok(e.do(t, http.MethodPatch, "/account", e.token, `{"displayName":"Nordlicht Outdoor"}`), http.StatusOK)
	ok(e.do(t, http.MethodPut, "/reviews/"+rev+"/reply", e.token, `{"text":"Thank you!"}`), http.StatusOK)
	ok(e.do(t, http.MethodDelete, "/reviews/"+rev+"/reply", e.token, nil), http.StatusNoContent)
	ok(e.do(t, http.MethodPost, "/reviews/"+rev+"/report", e.token, `{"reason":"spam"}`), http.StatusOK)
	cancel := "/events/" + e.acceptEvent(t, e.minimalEvent("checkout")) + "/cancel"
	ok(e.do(t, http.MethodPost, cancel, e.token, nil), http.StatusOK)
	ok(e.do(t, http.MethodPost, cancel, e.token, nil), http.StatusOK) // changes nothing: no second line
	e.create(t, "/suppressions", map[string]any{"address": "greta.zimmermann@example.com", "reason": "manual"})
	ok(e.do(t, http.MethodDelete, "/suppressions/greta.zimmermann@example.com", e.token, nil), http.StatusNoContent)
	ok(e.do(t, http.MethodPut, "/templates/sms_invite/en?eventTypeId="+etID, e.token,
		map[string]any{"text": "Hi {{firstName}}! How was your visit? Tell us in a minute:"}), http.StatusCreated)
	ok(e.do(t, http.MethodDelete, "/templates/sms_invite/en?eventTypeId="+etID, e.token, nil), http.StatusNoContent)
	hook := e.create(t, "/webhooks", map[string]any{"url": "https://hooks.example.com/tp", "events": webhook.EventTypes()})["id"].(string)
	ok(e.do(t, http.MethodPost, "/webhooks/"+hook+"/rotate-secret", e.token, nil), http.StatusOK)
	ok(e.do(t, http.MethodPost, "/webhooks/"+hook+"/replay", e.token, map[string]any{"since": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)}), http.StatusAccepted)
	ok(e.do(t, http.MethodPatch, "/webhooks/"+hook, e.token, `{"enabled":false}`), http.StatusOK)
	ok(e.do(t, http.MethodDelete, "/webhooks/"+hook, e.token, nil), http.StatusNoContent)

	r := e.get(t, "/audit?limit=100&actor="+clientOf(t, e.token))
	ok(r, http.StatusOK)
	assert.NotContains(t, string(r.body), "greta", "the trail holds no customer's data")
	var got []string
	for _, it := range r.object(t)["items"].([]any) {
		got = append(got, it.(map[string]any)["action"].(string))
	}
	assert.ElementsMatch(t, []string{
		persondb.AuditEventTypeCreated, persondb.AuditEventTypeChanged, persondb.AuditInviteSettingChanged,
		persondb.AuditBrandingChanged, persondb.AuditReviewReplied, persondb.AuditReviewReplyDeleted,
		persondb.AuditReviewReported, persondb.AuditInviteCancelled, persondb.AuditSuppressionAdded,
		persondb.AuditSuppressionLifted, persondb.AuditTemplateSaved, persondb.AuditTemplateDeleted,
		persondb.AuditWebhookEndpointAdded, persondb.AuditWebhookSecretRotated, persondb.AuditWebhooksReplayed,
		persondb.AuditWebhookEndpointChanged, persondb.AuditWebhookEndpointDeleted,
	}, got)
	all, _ := items(t, e.get(t, "/audit?limit=100"))
	require.Len(t, all, len(got)+1, "nothing else: the customer's review is in the review's history, not the trail")
	assert.Equal(t, persondb.AuditClientCreated, all[len(all)-1]["action"], "the client itself, made by the operator")
	assert.Equal(t, clientOf(t, e.token), all[len(all)-1]["target"])
}
