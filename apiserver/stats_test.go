package apiserver_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/invitedb"
)

// statsPeriod is a period around today (UTC) that the events of a test
// fall in, whenever it runs.
func statsPeriod() url.Values {
	now := time.Now().UTC()
	return url.Values{"from": {now.AddDate(0, 0, -1).Format(time.DateOnly)}, "to": {now.AddDate(0, 0, 1).Format(time.DateOnly)}}
}

func statsGet(t *testing.T, e *env, path, token string, q url.Values) response {
	t.Helper()
	return e.do(t, http.MethodGet, path+"?"+q.Encode(), token, nil)
}

// statsItems are the items of a stats answer (not a list: no cursor).
func statsItems(t *testing.T, r response) []map[string]any {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	raw, ok := r.object(t)["items"].([]any)
	require.True(t, ok, "%s", r.body)
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i] = v.(map[string]any)
	}
	return out
}

func with(q url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// TestStatsFunnel follows events through the API and the feedback page
// into GET /stats/invites and GET /stats/reviews.
func TestStatsFunnel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ety := e.create(t, "/event-types", map[string]any{"name": "checkout"})["id"].(string)
	german := e.minimalEvent("checkout")
	german["defaultLocale"] = "de_AT"
	sentID := e.acceptEvent(t, german)
	e.acceptEvent(t, e.minimalEvent("checkout"))
	skippedID := e.acceptEvent(t, e.minimalEvent("checkout"))

	now := time.Now().UTC()
	_, err := e.store.Invites.MarkScheduled(ctx, invite.KindInvite, sentID, now)
	require.NoError(t, err)
	c, err := e.store.Invites.ClaimSend(ctx, invite.KindInvite, sentID, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send)
	_, err = e.store.Invites.FinishSend(ctx, invite.KindInvite, sentID, invite.SendResult{SentAt: now})
	require.NoError(t, err)
	_, err = e.store.Invites.MarkSkipped(ctx, invite.KindInvite, skippedID, invite.RecentlyInvited)
	require.NoError(t, err)

	// The customer opens the page three times and answers: one opening.
	link := pathOf(t, e.feedbackLinks.URL(sentID))
	for range 3 {
		requireHTML(t, e.page(t, http.MethodGet, link, "", ""), http.StatusOK)
	}
	ev := e.get(t, "/events/"+sentID).object(t)
	openedAt := ev["invite"].(map[string]any)["openedAt"]
	require.NotNil(t, openedAt, "the first opening is on the stored invite")
	requireHTML(t, e.page(t, http.MethodPost, "/feedback", "application/x-www-form-urlencoded", feedbackForm(e.feedbackLinks.URL(sentID), "4", "fine")), http.StatusOK)
	requireHTML(t, e.page(t, http.MethodGet, link, "", ""), http.StatusOK)
	ev = e.get(t, "/events/"+sentID).object(t)
	assert.Equal(t, openedAt, ev["invite"].(map[string]any)["openedAt"], "later openings change nothing")

	r := statsGet(t, e, "/stats/invites", e.token, with(statsPeriod(), "groupBy", "locale"))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	body := r.object(t)
	total := body["total"].(map[string]any)
	assert.EqualValues(t, 3, total["accepted"])
	assert.EqualValues(t, 1, total["sent"])
	assert.EqualValues(t, 1, total["opened"])
	assert.EqualValues(t, 1, total["reviewed"])
	assert.EqualValues(t, 1, total["waiting"])
	assert.EqualValues(t, 1, total["reviewRate"])
	assert.EqualValues(t, 4, total["averageRating"])
	assert.Equal(t, map[string]any{"recently_invited": float64(1)}, total["skipped"])
	assert.Equal(t, "locale", body["groupBy"])
	assert.Equal(t, "UTC", body["timeZone"])
	list := statsItems(t, r)
	require.Len(t, list, 2)
	assert.Equal(t, "de", list[0]["key"])
	assert.EqualValues(t, 1, list[0]["reviewed"])
	assert.Equal(t, "en", list[1]["key"])
	assert.EqualValues(t, 2, list[1]["accepted"])
	assert.Nil(t, list[1]["reviewRate"], "nothing sent: no rate")
	assert.Nil(t, list[1]["averageRating"])

	// By day every day of the period is there; by event type, the id.
	list = statsItems(t, statsGet(t, e, "/stats/invites", e.token, statsPeriod()))
	require.Len(t, list, 3)
	assert.EqualValues(t, 3, list[0]["accepted"].(float64)+list[1]["accepted"].(float64)+list[2]["accepted"].(float64))
	list = statsItems(t, statsGet(t, e, "/stats/invites", e.token, with(statsPeriod(), "groupBy", "eventType", "timeZone", "Asia/Kathmandu")))
	require.Len(t, list, 1)
	assert.Equal(t, ety, list[0]["key"])
	assert.EqualValues(t, 3, list[0]["accepted"])

	r = statsGet(t, e, "/stats/reviews", e.token, with(statsPeriod(), "groupBy", "medium"))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	body = r.object(t)
	assert.EqualValues(t, 1, body["total"].(map[string]any)["count"])
	list = statsItems(t, r)
	require.Len(t, list, 1)
	assert.Equal(t, "email", list[0]["key"])
	assert.EqualValues(t, 4, list[0]["average"])
	assert.Equal(t, map[string]any{"1": 0.0, "2": 0.0, "3": 0.0, "4": 1.0, "5": 0.0}, list[0]["distribution"])

	// Every access group reads; another tenant sees none of it.
	for _, group := range []string{auth.GroupFull, auth.GroupEvents, auth.GroupReadonly} {
		tok := e.tokenFor(t, e.account, group)
		for _, path := range []string{"/stats/invites", "/stats/reviews"} {
			assert.Equal(t, http.StatusOK, statsGet(t, e, path, tok, statsPeriod()).status, "%s %s", group, path)
		}
	}
	_, other := e.otherAccount(t)
	r = statsGet(t, e, "/stats/invites", other, statsPeriod())
	require.Equal(t, http.StatusOK, r.status)
	assert.EqualValues(t, 0, r.object(t)["total"].(map[string]any)["accepted"])
	r = statsGet(t, e, "/stats/reviews", other, with(statsPeriod(), "groupBy", "eventType"))
	require.Equal(t, http.StatusOK, r.status)
	list = statsItems(t, r)
	assert.Empty(t, list)
	assert.Equal(t, http.StatusUnauthorized, statsGet(t, e, "/stats/invites", "", statsPeriod()).status)
}

// TestStatsHostileQueries: every bad parameter is a 400 problem naming
// it, before any query runs.
func TestStatsHostileQueries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := statsPeriod()
	for name, tc := range map[string]struct {
		query string
		field string
	}{
		"no from":             {"to=2026-03-01", "from"},
		"no to":               {"from=2026-03-01", "to"},
		"no dates":            {"", "from"},
		"time in a date":      {"from=2026-03-01T00:00:00Z&to=2026-03-02", "from"},
		"no such day":         {"from=2026-02-29&to=2026-03-02", "from"},
		"backwards":           {"from=2026-03-02&to=2026-03-01", "to"},
		"401 days":            {"from=2025-01-01&to=2026-02-05", "to"},
		"ancient":             {"from=0001-01-01&to=0001-01-02", "from"},
		"far future":          {"from=9999-12-30&to=9999-12-31", "from"},
		"unknown zone":        {good.Encode() + "&timeZone=Mars/Olympus_Mons", "timeZone"},
		"local zone":          {good.Encode() + "&timeZone=Local", "timeZone"},
		"path as zone":        {good.Encode() + "&timeZone=" + url.QueryEscape("../../../etc/passwd"), "timeZone"},
		"posix rule":          {good.Encode() + "&timeZone=" + url.QueryEscape("UTC+5"), "timeZone"},
		"huge zone":           {good.Encode() + "&timeZone=" + strings.Repeat("A", 10000), "timeZone"},
		"script zone":         {good.Encode() + "&timeZone=" + url.QueryEscape("</script><script>alert(1)</script>"), "timeZone"},
		"nul":                 {good.Encode() + "&timeZone=%00", "timeZone"},
		"bad utf-8":           {good.Encode() + "&groupBy=%ff", "groupBy"},
		"unknown groupBy":     {good.Encode() + "&groupBy=customer", "groupBy"},
		"groupBy case":        {good.Encode() + "&groupBy=Day", "groupBy"},
		"sql in groupBy":      {good.Encode() + "&groupBy=" + url.QueryEscape("day; DROP TABLE events"), "groupBy"},
		"repeated":            {good.Encode() + "&from=2026-03-01", "from"},
		"unknown parameter":   {good.Encode() + "&accountId=acc-00000000-0000-4000-8000-000000000000", "accountId"},
		"a list's parameters": {good.Encode() + "&limit=10", "limit"},
	} {
		for _, path := range []string{"/stats/invites", "/stats/reviews"} {
			r := e.do(t, http.MethodGet, path+"?"+tc.query, e.token, nil)
			requireProblem(t, r, http.StatusBadRequest, tc.field)
			assert.NotContains(t, string(r.body), "pq:", name)
		}
	}
	r := e.do(t, http.MethodGet, "/stats/invites?from=%zz", e.token, nil)
	requireProblem(t, r, http.StatusBadRequest)
}
