package apiserver_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/store"
)

func TestEventTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	r := e.do(t, http.MethodPost, "/event-types", e.token, map[string]any{"name": "checkout", "active": true})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	et := r.object(t)
	assert.ElementsMatch(t, []string{"id", "createdAt", "updatedAt", "active", "name"}, keys(et))
	id := et["id"].(string)
	assert.True(t, store.ValidID("ety", id), id)
	assert.Equal(t, "/event-types/"+id, r.header.Get("Location"))
	assert.Regexp(t, timestampRE, et["createdAt"])
	assert.Equal(t, et["createdAt"], et["updatedAt"])
	assert.Equal(t, true, et["active"])
	assert.Equal(t, "checkout", et["name"])
	assert.True(t, strings.HasPrefix(string(r.body), `{"id":`), "field order follows the spec: %s", r.body)

	// active defaults to true; names are case-sensitive and kept exactly.
	assert.Equal(t, true, e.create(t, "/event-types", map[string]any{"name": "Checkout"})["active"])
	inactive := e.create(t, "/event-types", map[string]any{"name": "renewal", "active": false})
	assert.Equal(t, false, inactive["active"])
	long := strings.Repeat("ü", 100) // 100 characters, 200 bytes
	assert.Equal(t, long, e.create(t, "/event-types", map[string]any{"name": long})["name"])

	got := e.get(t, "/event-types/"+id)
	require.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, et, got.object(t))

	requireProblem(t, e.do(t, http.MethodPost, "/event-types", e.token, map[string]any{"name": "checkout"}), http.StatusConflict)
	p := requireProblem(t, e.do(t, http.MethodPost, "/event-types", e.token, map[string]any{"name": "checkout", "active": false}), http.StatusConflict)
	assert.Equal(t, `event type name "checkout" is already taken`, p["detail"])

	for body, field := range map[string]string{
		`{"name":""}`:                                 "name",
		`{"name":" checkout"}`:                        "name",
		`{"name":"tab\there"}`:                        "name",
		`{"name":"` + strings.Repeat("x", 101) + `"}`: "name",
		`{}`:                          "name",
		`{"name":null}`:               "name",
		`{"name":1}`:                  "name",
		`{"name":"x","active":"yes"}`: "active",
		`{"name":"x","id":"ety-1"}`:   "id",
		`{"name":"x","Active":true}`:  "Active",
	} {
		requireProblem(t, e.do(t, http.MethodPost, "/event-types", e.token, body), http.StatusBadRequest, field)
	}

	// PATCH: merge patch of name and active.
	r = e.do(t, http.MethodPatch, "/event-types/"+id, e.token, map[string]any{"active": false})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	patched := r.object(t)
	assert.Equal(t, false, patched["active"])
	assert.Equal(t, "checkout", patched["name"])
	assert.Equal(t, et["createdAt"], patched["createdAt"])
	assert.GreaterOrEqual(t, patched["updatedAt"], et["updatedAt"])

	r = e.do(t, http.MethodPatch, "/event-types/"+id, e.token, `{"name":"checkout-v2","active":true}`,
		header{"Content-Type", "application/merge-patch+json"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "checkout-v2", r.object(t)["name"])

	r = e.do(t, http.MethodPatch, "/event-types/"+id, e.token, `{}`)
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "checkout-v2", r.object(t)["name"])

	requireProblem(t, e.do(t, http.MethodPatch, "/event-types/"+id, e.token, `{"name":"renewal"}`), http.StatusConflict)
	requireProblem(t, e.do(t, http.MethodPatch, "/event-types/"+id, e.token, `{"name":null,"active":null,"createdAt":"x"}`),
		http.StatusBadRequest, "name", "active", "createdAt")
	requireProblem(t, e.do(t, http.MethodPatch, "/event-types/"+id, e.token, `{"name":""}`), http.StatusBadRequest, "name")
	missing := "/event-types/ety-00000000-0000-4000-8000-000000000000"
	requireProblem(t, e.do(t, http.MethodPatch, missing, e.token, `{"active":true}`), http.StatusNotFound)
	p = requireProblem(t, e.get(t, missing), http.StatusNotFound)
	assert.Equal(t, "event type not found", p["detail"])
}

func TestChannels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	r := e.do(t, http.MethodPost, "/channels", e.token, map[string]any{"name": "Shop"})
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	ch := r.object(t)
	assert.ElementsMatch(t, []string{"id", "createdAt", "updatedAt", "name", "type"}, keys(ch))
	assert.Equal(t, "native", ch["type"])
	assert.True(t, store.ValidID("chl", ch["id"].(string)))
	assert.Equal(t, "/channels/"+ch["id"].(string), r.header.Get("Location"))
	assert.Regexp(t, timestampRE, ch["createdAt"])

	shopify := e.create(t, "/channels", map[string]any{"name": "Storefront", "type": "shopify"})
	assert.Equal(t, "shopify", shopify["type"])
	assert.Equal(t, "native", e.create(t, "/channels", map[string]any{"name": "Null type", "type": nil})["type"])
	assert.Equal(t, "my_api-2", e.create(t, "/channels", map[string]any{"name": "Custom", "type": "my_api-2"})["type"])

	p := requireProblem(t, e.do(t, http.MethodPost, "/channels", e.token, map[string]any{"name": "Shop", "type": "api"}), http.StatusConflict)
	assert.Equal(t, `channel name "Shop" is already taken`, p["detail"])
	requireProblem(t, e.do(t, http.MethodPost, "/channels", e.token, map[string]any{"name": "Default"}), http.StatusConflict)

	for _, typ := range []string{"", "Shopify", "1api", "shop ify", "shop.ify", strings.Repeat("a", 51)} {
		r := e.do(t, http.MethodPost, "/channels", e.token, map[string]any{"name": "x", "type": typ})
		requireProblem(t, r, http.StatusBadRequest, "type")
	}
	requireProblem(t, e.do(t, http.MethodPost, "/channels", e.token, `{"type":"api"}`), http.StatusBadRequest, "name")
	requireProblem(t, e.do(t, http.MethodPost, "/channels", e.token, `{"name":"","type":7}`), http.StatusBadRequest, "type")

	got := e.get(t, "/channels/"+ch["id"].(string))
	require.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, ch, got.object(t))
	requireProblem(t, e.get(t, "/channels/chl-00000000-0000-4000-8000-000000000000"), http.StatusNotFound)

	list, next := items(t, e.get(t, "/channels"))
	assert.Nil(t, next)
	require.Len(t, list, 5)
	assert.Equal(t, ch["id"], list[3]["id"]) // newest first
	assert.Equal(t, e.channel, list[4]["id"])
	assert.Equal(t, "Default", list[4]["name"])
}

// Every (channel, event type) pair has exactly one setting, whichever was
// created first.
func TestInviteSettingsCreatedForEveryPair(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	et := e.create(t, "/event-types", map[string]any{"name": "checkout"})
	list, _ := items(t, e.get(t, "/invite-settings"))
	require.Len(t, list, 1)
	s := list[0]
	assert.ElementsMatch(t, []string{"id", "channelId", "eventTypeId", "active", "medium", "delay", "delayFrom",
		"sendWindow", "minDaysBetweenInvites", "reminder", "createdAt", "updatedAt"}, keys(s))
	assert.Equal(t, map[string]any{"id": s["id"], "channelId": e.channel, "eventTypeId": et["id"], "active": true,
		"medium": "email", "delay": "P7D", "delayFrom": "event", "sendWindow": nil, "minDaysBetweenInvites": float64(30), "reminder": nil,
		"createdAt": et["createdAt"], "updatedAt": et["createdAt"]}, s)

	later := e.create(t, "/channels", map[string]any{"name": "Later", "type": "api"})
	et2 := e.create(t, "/event-types", map[string]any{"name": "renewal"})
	list, _ = items(t, e.get(t, "/invite-settings?limit=200"))
	pairs := map[string]bool{}
	for _, s := range list {
		pairs[s["channelId"].(string)+"/"+s["eventTypeId"].(string)] = true
	}
	assert.Equal(t, map[string]bool{
		e.channel + "/" + et["id"].(string): true, later["id"].(string) + "/" + et["id"].(string): true,
		e.channel + "/" + et2["id"].(string): true, later["id"].(string) + "/" + et2["id"].(string): true,
	}, pairs)

	byChannel, _ := items(t, e.get(t, "/invite-settings?channelId="+later["id"].(string)))
	assert.Len(t, byChannel, 2)
	both, _ := items(t, e.get(t, "/invite-settings?channelId="+later["id"].(string)+"&eventTypeId="+et2["id"].(string)))
	require.Len(t, both, 1)
	assert.Equal(t, later["id"], both[0]["channelId"])
	assert.Equal(t, et2["id"], both[0]["eventTypeId"])
	none, _ := items(t, e.get(t, "/invite-settings?eventTypeId=ety-00000000-0000-4000-8000-000000000000"))
	assert.Empty(t, none)

	got := e.get(t, "/invite-settings/"+both[0]["id"].(string))
	require.Equal(t, http.StatusOK, got.status)
	assert.Equal(t, both[0], got.object(t))
}

// Event types and channels created concurrently through the API still
// get a setting for every pair.
func TestConcurrentCreationCoversEveryPair(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 6
	var wg sync.WaitGroup
	statuses := make(chan int, 2*n)
	for i := range n {
		wg.Go(func() {
			statuses <- e.do(t, http.MethodPost, "/event-types", e.token, map[string]any{"name": fmt.Sprint("type ", i)}).status
		})
		wg.Go(func() {
			statuses <- e.do(t, http.MethodPost, "/channels", e.token, map[string]any{"name": fmt.Sprint("channel ", i)}).status
		})
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		require.Equal(t, http.StatusCreated, s)
	}
	list, next := items(t, e.get(t, "/invite-settings?limit=200"))
	assert.Nil(t, next)
	assert.Len(t, list, n*(n+1)) // n event types × (n channels + Default)
}

func TestPagination(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var want []string
	for i := range 7 {
		et := e.create(t, "/event-types", map[string]any{"name": fmt.Sprint("type ", i), "active": i%2 == 0})
		want = append([]string{et["id"].(string)}, want...)
	}

	// Walk three at a time; an insert between pages shifts nothing.
	var got []string
	path := "/event-types?limit=3"
	for page := 0; ; page++ {
		list, next := items(t, e.get(t, path))
		assert.LessOrEqual(t, len(list), 3)
		got = append(got, ids(list)...)
		if page == 0 {
			e.create(t, "/event-types", map[string]any{"name": "inserted meanwhile"})
		}
		if next == nil {
			break
		}
		path = "/event-types?limit=3&cursor=" + url.QueryEscape(next.(string))
	}
	assert.Equal(t, want, got)

	list, next := items(t, e.get(t, "/event-types"))
	assert.Len(t, list, 8)
	assert.Nil(t, next)
	list, next = items(t, e.get(t, "/event-types?limit=8"))
	assert.Len(t, list, 8)
	assert.Nil(t, next, "a full last page has no next page")

	// Filters
	list, _ = items(t, e.get(t, "/event-types?active=false"))
	assert.Len(t, list, 3)
	list, _ = items(t, e.get(t, "/event-types?active=true&limit=200"))
	assert.Len(t, list, 5)
	list, _ = items(t, e.get(t, "/event-types?name="+url.QueryEscape("type 3")))
	require.Len(t, list, 1)
	assert.Equal(t, "type 3", list[0]["name"])
	list, _ = items(t, e.get(t, "/event-types?name="+url.QueryEscape("TYPE 3")))
	assert.Empty(t, list, "names match case-sensitively")
	list, _ = items(t, e.get(t, "/event-types?name=&active=&limit=&cursor="))
	assert.Len(t, list, 8, "empty parameters are absent")

	chCursor := func() string {
		_, next := items(t, e.get(t, "/channels?limit=1"))
		if next == nil { // only Default: make a second channel
			e.create(t, "/channels", map[string]any{"name": "second"})
			_, next = items(t, e.get(t, "/channels?limit=1"))
		}
		return next.(string)
	}()
	for query, field := range map[string]string{
		"limit=0":             "limit",
		"limit=201":           "limit",
		"limit=-1":            "limit",
		"limit=abc":           "limit",
		"limit=1.5":           "limit",
		"cursor=not-a-cursor": "cursor",
		"cursor=" + chCursor:  "cursor",
		"active=yes":          "active",
		"active=TRUE":         "active",
		"limit=1&limit=2":     "limit",
		"nmae=x":              "nmae",
		"Active=true":         "Active",
		"cursor=%zz":          "",
		"limit=1;cursor=x":    "",
		"channelId=chl-1":     "channelId",
	} {
		r := e.get(t, "/event-types?"+query)
		p := requireProblem(t, r, http.StatusBadRequest)
		if field != "" {
			assert.NotEmpty(t, fieldMessage(t, r, field), query)
		}
		assert.NotEmpty(t, p["detail"])
	}
	assert.Contains(t, fieldMessage(t, e.get(t, "/event-types?nmae=x"), "nmae"), `did you mean "name"?`)
	r := e.get(t, "/invite-settings?channelId=chl-nope&eventTypeId=ETY-00000000-0000-4000-8000-000000000000")
	requireProblem(t, r, http.StatusBadRequest, "channelId", "eventTypeId")
	requireProblem(t, e.get(t, "/channels?cursor=zz"), http.StatusBadRequest, "cursor")
	requireProblem(t, e.get(t, "/invite-settings?limit=500"), http.StatusBadRequest, "limit")
}

// Another account's resources are invisible: 404 on GET and PATCH,
// absent from lists.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	et := e.create(t, "/event-types", map[string]any{"name": "checkout"})
	ch := e.create(t, "/channels", map[string]any{"name": "Shop"})
	settings, _ := items(t, e.get(t, "/invite-settings"))
	require.Len(t, settings, 2)

	_, other := e.otherAccount(t)
	for _, path := range []string{"/event-types/" + et["id"].(string), "/channels/" + ch["id"].(string), "/invite-settings/" + settings[0]["id"].(string)} {
		requireProblem(t, e.do(t, http.MethodGet, path, other, nil), http.StatusNotFound)
	}
	requireProblem(t, e.do(t, http.MethodPatch, "/event-types/"+et["id"].(string), other, `{"active":false}`), http.StatusNotFound)
	requireProblem(t, e.do(t, http.MethodPatch, "/invite-settings/"+settings[0]["id"].(string), other, `{"active":false}`), http.StatusNotFound)
	for _, path := range []string{"/event-types", "/invite-settings", "/invite-settings?channelId=" + ch["id"].(string),
		"/invite-settings?eventTypeId=" + et["id"].(string), "/event-types?name=checkout"} {
		list, _ := items(t, e.do(t, http.MethodGet, path, other, nil))
		assert.Empty(t, list, path)
	}
	chs, _ := items(t, e.do(t, http.MethodGet, "/channels", other, nil))
	require.Len(t, chs, 1) // only B's own Default
	assert.NotEqual(t, e.channel, chs[0]["id"])

	// The same name is free in another account, and B's writes leave A alone.
	r := e.do(t, http.MethodPost, "/event-types", other, map[string]any{"name": "checkout"})
	require.Equal(t, http.StatusCreated, r.status)
	unchanged := e.get(t, "/event-types/"+et["id"].(string)).object(t)
	assert.Equal(t, et, unchanged)
	settings2, _ := items(t, e.get(t, "/invite-settings"))
	assert.Len(t, settings2, 2)
}
