package apiserver_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/auth"
)

func TestSuppressionsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	created := e.create(t, "/suppressions", map[string]any{"address": "Ann.Lee+news@Example.com"})
	client := clientOf(t, e.token)
	assert.Equal(t, map[string]any{"address": "ann.lee+news@example.com", "medium": "email", "reason": "manual",
		"by": client, "createdAt": created["createdAt"]}, created)
	assert.Regexp(t, timestampRE, created["createdAt"])
	again := e.do(t, http.MethodPost, "/suppressions", e.token, map[string]any{"address": "ann.lee+news@example.com", "reason": "complained"})
	require.Equal(t, http.StatusOK, again.status, "an existing entry: 200, unchanged")
	assert.Equal(t, created, again.object(t))
	mobile := e.create(t, "/suppressions", map[string]any{"address": "+49 151 12345678", "reason": "unsubscribed"})
	assert.Equal(t, "+4915112345678", mobile["address"], "E.164")
	assert.Equal(t, "sms", mobile["medium"])

	for body, field := range map[string]string{
		`{}`:                                  "address",
		`{"address":""}`:                      "address",
		`{"address":"not an address"}`:        "address",
		`{"address":"Ann <ann@example.com>"}`: "address",
		`{"address":"0151 12345678"}`:         "address",
		`{"address":"+1"}`:                    "address",
		`{"address":"a@example.com","reason":"bored"}`: "reason",
		`{"address":"a@example.com","extra":1}`:        "extra",
	} {
		requireProblem(t, e.do(t, http.MethodPost, "/suppressions", e.token, body), http.StatusBadRequest, field)
	}

	list, next := items(t, e.get(t, "/suppressions"))
	assert.Nil(t, next)
	assert.Len(t, list, 2)
	byReason, _ := items(t, e.get(t, "/suppressions?reason=unsubscribed"))
	require.Len(t, byReason, 1)
	assert.Equal(t, "+4915112345678", byReason[0]["address"])
	byAddress, _ := items(t, e.get(t, "/suppressions?address=ANN.LEE%2Bnews@example.com"))
	assert.Len(t, byAddress, 1, "the address filter is case-insensitive")
	requireProblem(t, e.get(t, "/suppressions?reason=bored"), http.StatusBadRequest, "reason")
	first, cursor := items(t, e.get(t, "/suppressions?limit=1"))
	require.Len(t, first, 1)
	require.NotNil(t, cursor)
	second, _ := items(t, e.get(t, "/suppressions?limit=1&cursor="+cursor.(string)))
	require.Len(t, second, 1)
	assert.NotEqual(t, first[0]["address"], second[0]["address"])

	// Another account sees nothing, and cannot lift the entry.
	_, other := e.otherAccount(t)
	r := e.do(t, http.MethodGet, "/suppressions", other, nil)
	theirs, _ := items(t, r)
	assert.Empty(t, theirs)
	assert.Equal(t, http.StatusNotFound, e.do(t, http.MethodDelete, "/suppressions/ann.lee+news@example.com", other, nil).status)

	// DELETE takes the address literal or percent-escaped, in any case.
	assert.Equal(t, http.StatusNoContent, e.do(t, http.MethodDelete, "/suppressions/ANN.LEE%2Bnews%40example.com", e.token, nil).status)
	assert.Equal(t, http.StatusNotFound, e.do(t, http.MethodDelete, "/suppressions/ann.lee+news@example.com", e.token, nil).status)
	assert.Equal(t, http.StatusNotFound, e.do(t, http.MethodDelete, "/suppressions/nonsense", e.token, nil).status)

	// The customer's own unsubscribe is lifted only with their consent.
	requireProblem(t, e.do(t, http.MethodDelete, "/suppressions/+4915112345678", e.token, nil), http.StatusConflict)
	requireProblem(t, e.do(t, http.MethodDelete, "/suppressions/+4915112345678?confirm=yes", e.token, nil), http.StatusBadRequest, "confirm")
	requireProblem(t, e.do(t, http.MethodDelete, "/suppressions/+4915112345678?confirm=customer-consent&x=1", e.token, nil),
		http.StatusBadRequest, "x")
	still, _ := items(t, e.get(t, "/suppressions?address=%2B4915112345678"))
	assert.Len(t, still, 1, "a refused lift leaves the entry")
	assert.Equal(t, http.StatusNoContent,
		e.do(t, http.MethodDelete, "/suppressions/+4915112345678?confirm=customer-consent", e.token, nil).status)

	// Each change is in the address's history, with who made it.
	history, _ := items(t, e.get(t, "/suppressions/ANN.LEE%2Bnews@example.com/history"))
	require.Len(t, history, 2)
	for i, want := range []map[string]any{
		{"action": "lifted", "reason": "manual", "by": client},
		{"action": "added", "reason": "manual", "by": client},
	} {
		assert.Regexp(t, timestampRE, history[i]["at"])
		delete(history[i], "at")
		assert.Equal(t, want, history[i])
	}
	page, cursor := items(t, e.get(t, "/suppressions/%2B4915112345678/history?limit=1"))
	require.Len(t, page, 1)
	assert.Equal(t, "lifted", page[0]["action"])
	rest, _ := items(t, e.get(t, "/suppressions/%2B4915112345678/history?limit=1&cursor="+cursor.(string)))
	require.Len(t, rest, 1)
	assert.Equal(t, "added", rest[0]["action"])
	requireProblem(t, e.get(t, "/suppressions/%2B4915112345678/history?limit=0"), http.StatusBadRequest, "limit")
	assert.Equal(t, http.StatusNotFound, e.get(t, "/suppressions/never@example.com/history").status)
	assert.Equal(t, http.StatusNotFound, e.get(t, "/suppressions/nonsense/history").status)
	assert.Equal(t, http.StatusNotFound, e.do(t, http.MethodGet, "/suppressions/ann.lee+news@example.com/history", other, nil).status,
		"another account's history is not there")

	// Reading needs any group; writing needs full.
	readonly := e.tokenFor(t, e.account, auth.GroupReadonly)
	assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/suppressions", readonly, nil).status)
	assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/suppressions/ann.lee+news@example.com/history", readonly, nil).status)
	assert.Equal(t, http.StatusForbidden, e.do(t, http.MethodPost, "/suppressions", readonly, `{"address":"x@example.com"}`).status)
	assert.Equal(t, http.StatusForbidden, e.do(t, http.MethodDelete, "/suppressions/x@example.com", readonly, nil).status)
}

func TestAccountBranding(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	acc := e.get(t, "/account").object(t)
	assert.NotEmpty(t, acc["limits"])
	delete(acc, "limits") // TestDailyEventQuota and TestWebhookEndpointQuotaAnswers429 read them
	assert.Equal(t, map[string]any{"id": e.account, "name": "A", "displayName": "A", "logoUrl": nil, "brandColor": nil, "replyTo": nil}, acc,
		"displayName defaults to the name")

	r := e.do(t, http.MethodPatch, "/account", e.token,
		`{"displayName":"Nordlicht Outdoor","logoUrl":"https://cdn.example/logo.png","brandColor":"#1B5E20","replyTo":"care@nordlicht.example"}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	patched := r.object(t)
	assert.NotEmpty(t, patched["limits"])
	delete(patched, "limits")
	assert.Equal(t, map[string]any{"id": e.account, "name": "A", "displayName": "Nordlicht Outdoor", "logoUrl": "https://cdn.example/logo.png",
		"brandColor": "#1B5E20", "replyTo": "care@nordlicht.example"}, patched)

	for body, field := range map[string]string{
		`{"logoUrl":"http://cdn.example/logo.png"}`: "logoUrl",
		`{"brandColor":"green"}`:                    "brandColor",
		`{"brandColor":"#12345"}`:                   "brandColor",
		`{"replyTo":"not an address"}`:              "replyTo",
		`{"displayName":"Evil\r\nBcc: x@y"}`:        "displayName",
		`{"name":"renamed"}`:                        "name",
		`{"limits":{}}`:                             "limits",
	} {
		requireProblem(t, e.do(t, http.MethodPatch, "/account", e.token, body), http.StatusBadRequest, field)
	}
	r = e.do(t, http.MethodPatch, "/account", e.token, `{"displayName":null,"brandColor":null}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	got := r.object(t)
	assert.Equal(t, "A", got["displayName"], "null falls back to the name")
	assert.Nil(t, got["brandColor"])
	assert.Equal(t, "care@nordlicht.example", got["replyTo"], "a field not named is kept")

	readonly := e.tokenFor(t, e.account, auth.GroupReadonly)
	assert.Equal(t, http.StatusForbidden, e.do(t, http.MethodPatch, "/account", readonly, `{"displayName":"x"}`).status)
	_, other := e.otherAccount(t)
	assert.NotEqual(t, e.account, e.do(t, http.MethodGet, "/account", other, nil).object(t)["id"], "each client sees its own account")
}
