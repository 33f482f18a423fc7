package apiserver_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
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
	require.Len(t, all, 3, "the account's lines only")
	assert.Equal(t, "person.role_changed", all[0]["action"])
	assert.Equal(t, anna.ID, all[0]["actor"])
	assert.Equal(t, "anna@shop.example", all[0]["actorEmail"])
	assert.Equal(t, ben.ID, all[0]["target"])
	assert.Equal(t, map[string]any{"from": "viewer", "to": "editor"}, all[0]["detail"])
	assert.Equal(t, "operator", all[2]["actor"])
	assert.Nil(t, all[2]["actorEmail"])

	assert.Len(t, list("actor="+anna.ID), 2)
	assert.Len(t, list("actor=operator"), 1)
	assert.Len(t, list("from="+url.QueryEscape(all[1]["at"].(string))), 2, "from is inclusive")
	assert.Len(t, list("to="+url.QueryEscape(all[1]["at"].(string))), 1, "to is exclusive")

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
	assert.Len(t, seen, 3)

	r := e.do(t, http.MethodGet, "/audit", otherToken, nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Len(t, r.object(t)["items"], 1, "another account sees its own trail only")

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
