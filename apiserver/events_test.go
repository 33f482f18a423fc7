package apiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/store"
)

// minimalEvent is the documented minimal request for the env's channel.
func (e *env) minimalEvent(typ string) map[string]any {
	return map[string]any{
		"customer":      map[string]any{"email": "ann@example.com"},
		"type":          typ,
		"channel":       map[string]any{"id": e.channel},
		"transaction":   map[string]any{"reference": "order-1", "date": "2026-11-20T10:00:00+01:00"},
		"system":        "shop",
		"systemVersion": "4.2",
	}
}

// fullEvent has every documented and tolerated field.
func (e *env) fullEvent(typ string) map[string]any {
	ev := e.minimalEvent(typ)
	ev["customer"] = map[string]any{"email": "ann@example.com", "firstName": "Ann", "lastName": "Lee",
		"address": "1 Main St", "mobile": "+4912345", "reference": "cst-1"}
	ev["channel"] = map[string]any{"id": e.channel, "type": "shopify"}
	ev["defaultLocale"] = "de_DE"
	ev["estimatedDeliveryDate"] = "2026-11-24"
	ev["products"] = []any{map[string]any{"name": "Mug", "sku": "M-1", "url": "https://shop.example/mug",
		"gtin": "0123", "imageUrl": "https://shop.example/mug.png", "mpn": "MPN1", "brand": "Acme",
		"parentProduct": map[string]any{"name": "Mugs", "sku": "M"}, "categories": []any{"kitchen", "gifts"}}}
	ev["metadata"] = map[string]any{"campaign": "winter", "b": "2"}
	return ev
}

func (e *env) acceptEvent(t *testing.T, body any, headers ...header) string {
	t.Helper()
	r := e.do(t, http.MethodPost, "/events", e.token, body, headers...)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	return r.object(t)["EventRef"].(string)
}

func TestAcceptEventAnswersAsDocumented(t *testing.T) {
	t.Parallel()
	notified := make(chan struct{}, 10)
	e := newEnv(t, func(o *apiserver.Options) { o.Notify = func() { notified <- struct{}{} } })
	e.create(t, "/event-types", map[string]any{"name": "checkout"})

	r := e.do(t, http.MethodPost, "/events", e.token, e.minimalEvent("checkout"))
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	body := r.object(t)
	assert.ElementsMatch(t, []string{"Message", "EventRef"}, keys(body))
	ref := body["EventRef"].(string)
	assert.True(t, store.ValidID("evt", ref), ref)
	assert.Equal(t, "Your event ("+ref+") was accepted for processing.", body["Message"])
	assert.Len(t, notified, 1, "the starters are woken after the commit")

	got := e.get(t, "/events/"+ref)
	require.Equal(t, http.StatusOK, got.status, "%s", got.body)
	ev := got.object(t)
	assert.Equal(t, ref, ev["id"])
	assert.Regexp(t, timestampRE, ev["receivedAt"])
	assert.True(t, store.ValidID("ety", ev["eventTypeId"].(string)))
	assert.Equal(t, "2026-11-20T09:00:00.000Z", ev["transaction"].(map[string]any)["date"], "normalised to UTC milliseconds")
	assert.Equal(t, map[string]any{"status": "pending", "reason": nil, "medium": "email", "scheduledFor": nil,
		"sentAt": nil, "openedAt": nil, "attempts": 0.0, "lastError": nil, "delivery": nil, "reminder": nil, "attemptHistory": []any{}}, ev["invite"])
	assert.Nil(t, ev["review"], "no review yet")
	assert.Nil(t, ev["erasedAt"], "not erased")
	assert.ElementsMatch(t, []string{"id", "receivedAt", "eventTypeId", "customer", "type", "channel", "transaction",
		"system", "systemVersion", "invite", "review", "erasedAt"}, keys(ev), "absent optional fields stay absent")
}

func TestEveryFieldIsStoredAndReturned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	sent := e.fullEvent("checkout")
	ref := e.acceptEvent(t, sent)
	ev := e.get(t, "/events/"+ref).object(t)
	for _, k := range []string{"customer", "channel", "defaultLocale", "estimatedDeliveryDate", "products", "metadata", "system", "systemVersion", "type"} {
		assert.EqualValues(t, sent[k], ev[k], k)
	}
}

func TestInactiveEventTypeStillAccepts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout", "active": false})
	ref := e.acceptEvent(t, e.minimalEvent("checkout"))
	assert.Equal(t, "pending", e.get(t, "/events/"+ref).object(t)["invite"].(map[string]any)["status"],
		"stored; its workflow records skipped")
}

func TestEventValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	with := func(mutate func(ev map[string]any)) map[string]any {
		ev := e.fullEvent("checkout")
		mutate(ev)
		return ev
	}
	cases := map[string]struct {
		body  map[string]any
		field string
	}{
		"missing customer":       {with(func(ev map[string]any) { delete(ev, "customer") }), "customer"},
		"missing email":          {with(func(ev map[string]any) { ev["customer"] = map[string]any{"firstName": "A"} }), "customer.email"},
		"bad email":              {with(func(ev map[string]any) { ev["customer"] = map[string]any{"email": "Ann <a@b.c>"} }), "customer.email"},
		"empty type":             {with(func(ev map[string]any) { ev["type"] = "" }), "type"},
		"missing channel id":     {with(func(ev map[string]any) { ev["channel"] = map[string]any{"type": "x"} }), "channel.id"},
		"malformed channel id":   {with(func(ev map[string]any) { ev["channel"] = map[string]any{"id": "chl-1"} }), "channel.id"},
		"missing transaction":    {with(func(ev map[string]any) { delete(ev, "transaction") }), "transaction"},
		"bad transaction date":   {with(func(ev map[string]any) { ev["transaction"] = map[string]any{"reference": "r", "date": "20.11.2026"} }), "transaction.date"},
		"missing reference":      {with(func(ev map[string]any) { ev["transaction"] = map[string]any{"date": "2026-11-20T10:00:00Z"} }), "transaction.reference"},
		"missing system":         {with(func(ev map[string]any) { delete(ev, "system") }), "system"},
		"snake systemVersion":    {with(func(ev map[string]any) { ev["system_version"] = ev["systemVersion"]; delete(ev, "systemVersion") }), "system_version"},
		"bad locale":             {with(func(ev map[string]any) { ev["defaultLocale"] = "german" }), "defaultLocale"},
		"bad delivery date":      {with(func(ev map[string]any) { ev["estimatedDeliveryDate"] = "2026-02-30" }), "estimatedDeliveryDate"},
		"product url":            {with(func(ev map[string]any) { ev["products"] = []any{map[string]any{"url": "javascript:alert(1)"}} }), "products[0].url"},
		"unknown product field":  {with(func(ev map[string]any) { ev["products"] = []any{map[string]any{"price": 3}} }), "products[0].price"},
		"too many products":      {with(func(ev map[string]any) { ev["products"] = slices.Repeat([]any{map[string]any{}}, 51) }), "products"},
		"long string":            {with(func(ev map[string]any) { ev["system"] = strings.Repeat("x", 1025) }), "system"},
		"metadata value type":    {with(func(ev map[string]any) { ev["metadata"] = map[string]any{"n": 1} }), "metadata.n"},
		"metadata key too long":  {with(func(ev map[string]any) { ev["metadata"] = map[string]any{strings.Repeat("k", 65): "v"} }), "metadata"},
		"metadata value long":    {with(func(ev map[string]any) { ev["metadata"] = map[string]any{"k": strings.Repeat("v", 1025)} }), "metadata.k"},
		"NUL byte":               {with(func(ev map[string]any) { ev["system"] = "a\x00b" }), "system"},
		"case-mismatched key":    {with(func(ev map[string]any) { ev["Type"] = ev["type"]; delete(ev, "type") }), "Type"},
		"customer not an object": {with(func(ev map[string]any) { ev["customer"] = "ann@example.com" }), "customer"},
	}
	meta := map[string]any{}
	for i := range 51 {
		meta[fmt.Sprintf("k%d", i)] = "v"
	}
	cases["too many metadata keys"] = struct {
		body  map[string]any
		field string
	}{with(func(ev map[string]any) { ev["metadata"] = meta }), "metadata"}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			requireProblem(t, e.do(t, http.MethodPost, "/events", e.token, tc.body), http.StatusBadRequest, tc.field)
		})
	}
	hint := fieldMessage(t, e.do(t, http.MethodPost, "/events", e.token, cases["snake systemVersion"].body), "system_version")
	assert.Contains(t, hint, `did you mean "systemVersion"?`)

	// Nothing of the rejected requests was stored.
	list, _ := items(t, e.get(t, "/events"))
	assert.Empty(t, list)
}

func TestEventBodyLimitsAndMediaType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	big := e.minimalEvent("checkout")
	big["metadata"] = map[string]any{"k": strings.Repeat("x", 70<<10)}
	requireProblem(t, e.do(t, http.MethodPost, "/events", e.token, big), http.StatusRequestEntityTooLarge)
	requireProblem(t, e.do(t, http.MethodPost, "/events", e.token, "customer=a", header{"Content-Type", "application/x-www-form-urlencoded"}), http.StatusUnsupportedMediaType)
	requireProblem(t, e.do(t, http.MethodPost, "/events", e.token, `{"type":"checkout"} {}`), http.StatusBadRequest)
	requireProblem(t, e.do(t, http.MethodPost, "/events", e.token, `{"type":"a","type":"b"}`), http.StatusBadRequest, "type")
}

func TestUnknownTypeOrChannelIs422(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	p := requireProblem(t, e.do(t, http.MethodPost, "/events", e.token, e.minimalEvent("renewal")), http.StatusUnprocessableEntity, "type")
	assert.Contains(t, p["detail"], `"renewal"`)

	other, otherToken := e.otherAccount(t)
	otherChannel, err := e.store.Accounts.DefaultChannel(context.Background(), other)
	require.NoError(t, err)
	ev := e.minimalEvent("checkout")
	ev["channel"] = map[string]any{"id": otherChannel.ID}
	requireProblem(t, e.do(t, http.MethodPost, "/events", e.token, ev), http.StatusUnprocessableEntity, "channel.id")
	// The other account has no event type "checkout" at all.
	requireProblem(t, e.do(t, http.MethodPost, "/events", otherToken, e.minimalEvent("checkout")), http.StatusUnprocessableEntity, "type")
}

func TestIdempotencyKeyOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	key := header{"Idempotency-Key", "order-1-checkout"}
	first := e.do(t, http.MethodPost, "/events", e.token, e.minimalEvent("checkout"), key)
	require.Equal(t, http.StatusAccepted, first.status, "%s", first.body)

	// The same request, keys reordered and the date written differently: the same event.
	same := `{"type":"checkout","system":"shop","systemVersion":"4.2","channel":{"id":"` + e.channel + `"},` +
		`"transaction":{"date":"2026-11-20T09:00:00.000Z","reference":"order-1"},"customer":{"email":"ann@example.com"}}`
	again := e.do(t, http.MethodPost, "/events", e.token, same, key)
	require.Equal(t, http.StatusAccepted, again.status, "%s", again.body)
	assert.JSONEq(t, string(first.body), string(again.body))

	changed := e.minimalEvent("checkout")
	changed["system"] = "pos"
	requireProblem(t, e.do(t, http.MethodPost, "/events", e.token, changed, key), http.StatusUnprocessableEntity, "Idempotency-Key")
	requireProblem(t, e.do(t, http.MethodPost, "/events", e.token, e.minimalEvent("checkout"), header{"Idempotency-Key", "bad key"}), http.StatusBadRequest, "Idempotency-Key")

	// Concurrent repeats of a new key: one event.
	var wg sync.WaitGroup
	refs := make([]string, 8)
	for i := range refs {
		wg.Go(func() {
			r := e.do(t, http.MethodPost, "/events", e.token, e.minimalEvent("checkout"), header{"Idempotency-Key", "burst"})
			if assert.Equal(t, http.StatusAccepted, r.status, "%s", r.body) {
				refs[i] = r.object(t)["EventRef"].(string)
			}
		})
	}
	wg.Wait()
	for _, ref := range refs {
		assert.Equal(t, refs[0], ref)
	}
	list, _ := items(t, e.get(t, "/events"))
	assert.Len(t, list, 2)
}

func TestListEventsOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	e.create(t, "/event-types", map[string]any{"name": "renewal"})
	var refs []string
	for i := range 3 {
		ev := e.minimalEvent("checkout")
		ev["customer"] = map[string]any{"email": fmt.Sprintf("User%d@Example.com", i)}
		refs = append([]string{e.acceptEvent(t, ev)}, refs...)
	}
	renewal := e.acceptEvent(t, e.minimalEvent("renewal"))

	page, next := items(t, e.get(t, "/events?limit=2&type=checkout"))
	require.NotNil(t, next)
	rest, last := items(t, e.get(t, "/events?limit=2&type=checkout&cursor="+next.(string)))
	assert.Nil(t, last)
	assert.Equal(t, refs, append(ids(page), ids(rest)...))

	byEmail, _ := items(t, e.get(t, "/events?customerEmail=user1@example.COM"))
	require.Len(t, byEmail, 1)
	assert.Equal(t, refs[1], byEmail[0]["id"])

	byType, _ := items(t, e.get(t, "/events?type=renewal&status=pending&channelId="+e.channel))
	assert.Equal(t, []string{renewal}, ids(byType))
	none, _ := items(t, e.get(t, "/events?receivedTo=2000-01-01T00:00:00Z"))
	assert.Empty(t, none)

	for query, field := range map[string]string{
		"status=done":                       "status",
		"receivedFrom=yesterday":            "receivedFrom",
		"channelId=chl-1":                   "channelId",
		"limit=0":                           "limit",
		"cursor=abc":                        "cursor",
		"customer_email=a":                  "customer_email",
		"type=" + strings.Repeat("x", 2000): "type",
		"transactionReference=" + url.QueryEscape("' OR 1=1 --"): "",
	} {
		r := e.get(t, "/events?"+query)
		if field == "" {
			list, _ := items(t, r)
			assert.Empty(t, list, "filters are values, never SQL")
			continue
		}
		requireProblem(t, r, http.StatusBadRequest, field)
	}

	_, otherToken := e.otherAccount(t)
	theirs := e.do(t, http.MethodGet, "/events", otherToken, nil)
	list, _ := items(t, theirs)
	assert.Empty(t, list, "another account sees none")
	requireProblem(t, e.do(t, http.MethodGet, "/events/"+refs[0], otherToken, nil), http.StatusNotFound)
	requireProblem(t, e.get(t, "/events/evt-../../etc/passwd"), http.StatusNotFound)
}

func TestCancelAndRetryOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	setStatus := func(id, status string) {
		_, err := e.store.DB().Exec(`UPDATE events SET invite_status = $2 WHERE id = $1`, id, status)
		require.NoError(t, err)
	}

	ref := e.acceptEvent(t, e.minimalEvent("checkout"))
	r := e.do(t, http.MethodPost, "/events/"+ref+"/cancel", e.token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "cancelled", r.object(t)["invite"].(map[string]any)["status"])
	r = e.do(t, http.MethodPost, "/events/"+ref+"/cancel", e.token, nil)
	require.Equal(t, http.StatusOK, r.status, "cancel is idempotent")
	requireProblem(t, e.do(t, http.MethodPost, "/events/"+ref+"/retry", e.token, nil), http.StatusConflict)

	sent := e.acceptEvent(t, e.minimalEvent("checkout"))
	setStatus(sent, "sent")
	p := requireProblem(t, e.do(t, http.MethodPost, "/events/"+sent+"/cancel", e.token, nil), http.StatusConflict)
	assert.Contains(t, p["detail"], "sent")

	failed := e.acceptEvent(t, e.minimalEvent("checkout"))
	setStatus(failed, "failed")
	r = e.do(t, http.MethodPost, "/events/"+failed+"/retry", e.token, nil)
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	assert.Equal(t, "pending", r.object(t)["invite"].(map[string]any)["status"])
	requireProblem(t, e.do(t, http.MethodPost, "/events/"+failed+"/retry", e.token, nil), http.StatusConflict)

	// Cancel and retry need the full group; reading needs any.
	events := e.tokenFor(t, e.account, auth.GroupEvents)
	requireProblem(t, e.do(t, http.MethodPost, "/events/"+sent+"/cancel", events, nil), http.StatusForbidden)
	requireProblem(t, e.do(t, http.MethodPost, "/events/"+sent+"/retry", events, nil), http.StatusForbidden)
	assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/events/"+sent, events, nil).status)
	readonly := e.tokenFor(t, e.account, auth.GroupReadonly)
	requireProblem(t, e.do(t, http.MethodPost, "/events", readonly, e.minimalEvent("checkout")), http.StatusForbidden)
	assert.Equal(t, http.StatusAccepted, e.do(t, http.MethodPost, "/events", events, e.minimalEvent("checkout")).status)

	_, otherToken := e.otherAccount(t)
	requireProblem(t, e.do(t, http.MethodPost, "/events/"+failed+"/cancel", otherToken, nil), http.StatusNotFound)
}

// An event's type is counted in characters, like event type names, so a
// 100-character non-ASCII name receives events.
func TestEventTypeNameOfManyBytes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := strings.Repeat("ü", 100)
	e.create(t, "/event-types", map[string]any{"name": name})
	ref := e.acceptEvent(t, e.minimalEvent(name))
	assert.Equal(t, name, e.get(t, "/events/"+ref).object(t)["type"])
	requireProblem(t, e.do(t, http.MethodPost, "/events", e.token, e.minimalEvent(name+"ü")), http.StatusBadRequest, "type")
}
