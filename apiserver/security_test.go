package apiserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/internal/testclock"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/storeset"
)

func TestNosniffOnEveryAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	for _, tc := range []struct {
		method, path, token string
		body                any
		status              int
	}{
		{http.MethodGet, "/healthz", "", nil, http.StatusOK},
		{http.MethodGet, "/readyz", "", nil, http.StatusOK},
		{http.MethodGet, "/openapi.yaml", "", nil, http.StatusOK},
		{http.MethodGet, "/event-types", e.token, nil, http.StatusOK},
		{http.MethodPost, "/events", e.token, e.minimalEvent("checkout"), http.StatusAccepted},
		{http.MethodPost, "/event-types", e.token, `{"name":`, http.StatusBadRequest},
		{http.MethodGet, "/event-types", "", nil, http.StatusUnauthorized},
		{http.MethodGet, "/nowhere", e.token, nil, http.StatusNotFound},
		{http.MethodDelete, "/event-types", e.token, nil, http.StatusMethodNotAllowed},
	} {
		r := e.do(t, tc.method, tc.path, tc.token, tc.body)
		assert.Equal(t, tc.status, r.status, "%s %s: %s", tc.method, tc.path, r.body)
		assert.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"), "%s %s", tc.method, tc.path)
	}
}

func TestControlCharactersAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	for _, name := range []string{"evil\r\nBcc: all@example.com", "tab\there", "bell\a", "next\u0085line", "line\u2028separator"} {
		for _, path := range []string{"/event-types", "/channels"} {
			r := e.do(t, http.MethodPost, path, e.token, map[string]any{"name": name})
			requireProblem(t, r, http.StatusBadRequest, "name")
		}
	}
	event := func(change func(ev map[string]any)) map[string]any {
		ev := e.minimalEvent("checkout")
		ev["customer"] = map[string]any{"email": "ann@example.com"}
		change(ev)
		return ev
	}
	customer := func(field, v string) func(map[string]any) {
		return func(ev map[string]any) { ev["customer"].(map[string]any)[field] = v }
	}
	for field, change := range map[string]func(map[string]any){
		"customer.email":        customer("email", "ann@example.com\r\nBcc: all@example.com"),
		"customer.firstName":    customer("firstName", "Ann\r\nBcc: all@example.com"),
		"customer.lastName":     customer("lastName", "Lee\n"),
		"customer.mobile":       customer("mobile", "+49\t151"),
		"customer.reference":    customer("reference", "c-1\u2029"),
		"type":                  func(ev map[string]any) { ev["type"] = "checkout\r\n" },
		"channel.type":          func(ev map[string]any) { ev["channel"].(map[string]any)["type"] = "shop\nify" },
		"transaction.reference": func(ev map[string]any) { ev["transaction"].(map[string]any)["reference"] = "o-1\x1b[31m" },
	} {
		r := e.do(t, http.MethodPost, "/events", e.token, event(change))
		requireProblem(t, r, http.StatusBadRequest, field)
		assert.Contains(t, fieldMessage(t, r, field), "must not contain control characters such as line breaks (U+", field)
	}
	// A postal address may span lines.
	e.acceptEvent(t, event(customer("address", "1 Main St\nSpringfield")))
}

// TestProductFieldsAreCleanAtTheBoundary: a product name with a bell or a
// right-to-left override, and a SKU with an escape sequence or an
// invisible character, are refused with 400 naming the field and the
// character, in one event and in a batch; the multi-line values are
// cleaned and stored so.
func TestProductFieldsAreCleanAtTheBoundary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	withProduct := func(p map[string]any) map[string]any {
		ev := e.minimalEvent("checkout")
		ev["customer"] = map[string]any{"email": "ann@example.com"}
		ev["products"] = []any{map[string]any{"name": "Rain jacket", "sku": "JKT-1"}, p}
		return ev
	}
	for _, tc := range []struct {
		product map[string]any
		field   string
		message string
	}{
		{map[string]any{"name": "Rain\ajacket"}, "products[1].name",
			"must not contain control characters such as line breaks (U+0007 at character 5)"},
		{map[string]any{"name": "Rain \u202Etekcaj"}, "products[1].name",
			"must not contain bidirectional overrides or isolates (U+202E at character 6)"},
		{map[string]any{"name": "ok", "brand": "Acme\u2066"}, "products[1].brand", "bidirectional"},
		{map[string]any{"sku": "JKT\u001b[2J"}, "products[1].sku", "(U+001B at character 4)"},
		{map[string]any{"gtin": "4006381333931\u200b"}, "products[1].gtin", "must not contain invisible characters (U+200B"},
		{map[string]any{"mpn": "\u0085"}, "products[1].mpn", "control characters"},
		{map[string]any{"url": "https://shop.example/\u202Egpj.exe"}, "products[1].url", "bidirectional"},
		{map[string]any{"imageUrl": "https://user:pw@shop.example/i.png"}, "products[1].imageUrl", "without user information"},
		{map[string]any{"parentProduct": map[string]any{"name": "P\u2028Q"}}, "products[1].parentProduct.name", "control characters"},
		{map[string]any{"categories": []any{"ok", "bad\u2069"}}, "products[1].categories[1]", "bidirectional"},
	} {
		r := e.do(t, http.MethodPost, "/events", e.token, withProduct(tc.product))
		requireProblem(t, r, http.StatusBadRequest, tc.field)
		assert.Contains(t, fieldMessage(t, r, tc.field), tc.message, tc.field)

		items := e.batchItems(t, map[string]any{"events": []any{withProduct(tc.product)}})
		require.Len(t, items, 1)
		assert.Contains(t, itemProblem(t, items[0], http.StatusBadRequest)[tc.field], tc.message, "the batch names the field too")
	}

	ev := withProduct(map[string]any{"name": "<b>Tom & \"Jerry\"</b> ]]> \u200f"})
	ev["customer"].(map[string]any)["address"] = "1 Main St\r\nSpringfield\a\u202E"
	ev["metadata"] = map[string]any{"note": " leave at\r\nthe door\u0007 "}
	id := e.acceptEvent(t, ev)
	got := e.get(t, "/events/"+id).object(t)
	assert.Equal(t, "1 Main St\nSpringfield", got["customer"].(map[string]any)["address"], "multi-line text is cleaned")
	assert.Equal(t, map[string]any{"note": "leave at\nthe door"}, got["metadata"])
	assert.Equal(t, "<b>Tom & \"Jerry\"</b> ]]> \u200f", got["products"].([]any)[1].(map[string]any)["name"], "a name is kept as sent")
}

func TestValidationErrorsAreCapped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ev := e.minimalEvent("checkout")
	var products []any
	for range 50 {
		products = append(products, map[string]any{"url": "not a url", "imageUrl": "javascript:alert(1)"})
	}
	ev["products"] = products
	r := e.do(t, http.MethodPost, "/events", e.token, ev)
	p := requireProblem(t, r, http.StatusBadRequest)
	assert.Len(t, problemErrors(t, p), 50)
	assert.Contains(t, p["detail"], "(and 99 more errors); the first 50 are listed")
}

func TestReadinessIsCachedForASecond(t *testing.T) {
	t.Parallel()
	clock := testclock.New(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	var checks atomic.Int32
	e := newEnv(t, func(o *apiserver.Options) {
		o.Now = clock.Now
		o.Readiness = func(context.Context) map[string]error {
			checks.Add(1)
			return map[string]error{"temporal": nil}
		}
	})
	// Many callers at once, and one after another: one check.
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			res, err := http.Get(e.srv.URL + "/readyz")
			if assert.NoError(t, err) {
				res.Body.Close()
				assert.Equal(t, http.StatusOK, res.StatusCode)
			}
		})
	}
	wg.Wait()
	for range 5 {
		assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/readyz", "", nil).status)
	}
	assert.EqualValues(t, 1, checks.Load())

	clock.Advance(999 * time.Millisecond)
	e.do(t, http.MethodGet, "/readyz", "", nil)
	assert.EqualValues(t, 1, checks.Load())
	clock.Advance(time.Millisecond)
	r := e.do(t, http.MethodGet, "/readyz", "", nil)
	assert.EqualValues(t, 2, checks.Load())
	assert.Equal(t, map[string]any{"status": "ok", "dependencies": map[string]any{"postgresql": "ok", "temporal": "ok"}}, r.object(t))
}

func TestResourceQuotasAnswer429(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "P7D")
	st.Accounts.Quotas = accountdb.Quotas{Channels: 2, EventTypes: 1}
	e := newEnvWith(t, st)
	e.create(t, "/channels", map[string]any{"name": "shop"}) // with Default: two
	r := e.do(t, http.MethodPost, "/channels", e.token, map[string]any{"name": "one too many"})
	p := requireProblem(t, r, http.StatusTooManyRequests)
	assert.Equal(t, "this account may have at most 2 channels; the operator can raise its quota (touchpoint accounts set-quota)", p["detail"])

	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	r = e.do(t, http.MethodPost, "/event-types", e.token, map[string]any{"name": "renewal"})
	p = requireProblem(t, r, http.StatusTooManyRequests)
	assert.Contains(t, p["detail"], "at most 1 event types")

	list, _ := items(t, e.get(t, "/channels"))
	assert.Len(t, list, 2, "nothing was created")
	other, tok := e.otherAccount(t)
	require.NotEmpty(t, other)
	r = e.do(t, http.MethodPost, "/event-types", tok, map[string]any{"name": "renewal"})
	assert.Equal(t, http.StatusCreated, r.status, "another account has its own quota: %s", r.body)
}

func TestWebhookEndpointQuotaAnswers429(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "P7D")
	st.Accounts.Quotas = accountdb.Quotas{WebhookEndpoints: 2}
	e := newEnvWith(t, st)
	hook := map[string]any{"url": "https://hooks.example.com/tp", "events": []string{"invite.sent"}}
	e.create(t, "/webhooks", hook)
	e.create(t, "/webhooks", hook)
	r := e.do(t, http.MethodPost, "/webhooks", e.token, hook)
	p := requireProblem(t, r, http.StatusTooManyRequests)
	assert.Equal(t, "this account may have at most 2 webhook endpoints; the operator can raise its quota (touchpoint accounts set-quota)", p["detail"])
	list, _ := items(t, e.get(t, "/webhooks"))
	assert.Len(t, list, 2, "nothing was created")
	limits := e.get(t, "/account").object(t)["limits"].(map[string]any)
	assert.Equal(t, map[string]any{"limit": 2.0, "used": 2.0}, limits["webhookEndpoints"])
}

// requireRetryAtMidnight checks that a Retry-After, of an answer given
// between before and after, points at the next UTC midnight (to the
// second, rounded up).
func requireRetryAtMidnight(t *testing.T, value string, before, after time.Time) {
	t.Helper()
	n, err := strconv.Atoi(value)
	require.NoError(t, err, "Retry-After %q", value)
	next := func(at time.Time) time.Time { return at.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour) }
	assert.GreaterOrEqual(t, n, int(next(after).Sub(after).Seconds()), "Retry-After until midnight UTC")
	assert.LessOrEqual(t, n, int(next(before).Sub(before).Seconds())+1, "Retry-After until midnight UTC")
}

// Accepted events are limited per UTC day: POST /events over the quota is
// 429 with Retry-After at the next UTC midnight; in a batch, the events
// that fit are accepted and each after them gets its own 429; invalid
// events and repeats of accepted ones are not counted; GET /account shows
// the quota and today's use.
func TestDailyEventQuota(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "P7D")
	st.Accounts.Quotas = accountdb.Quotas{DailyEvents: 3}
	e := newEnvWith(t, st)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	dailyEvents := func() any {
		t.Helper()
		return e.get(t, "/account").object(t)["limits"].(map[string]any)["dailyEvents"]
	}
	assert.Equal(t, map[string]any{"limit": 3.0, "used": 0.0}, dailyEvents())

	first := e.acceptEvent(t, e.minimalEvent("checkout"), header{"Idempotency-Key", "order-1"})
	assert.Equal(t, first, e.acceptEvent(t, e.minimalEvent("checkout"), header{"Idempotency-Key", "order-1"}), "a repeat")
	requireProblem(t, e.do(t, http.MethodPost, "/events", e.token, e.minimalEvent("no-such-type")), http.StatusUnprocessableEntity)
	requireProblem(t, e.do(t, http.MethodPost, "/events", e.token, map[string]any{"type": "checkout"}), http.StatusBadRequest)
	assert.Equal(t, map[string]any{"limit": 3.0, "used": 1.0}, dailyEvents(), "repeats and refused events are not counted")
	e.acceptEvent(t, e.minimalEvent("checkout"))
	e.acceptEvent(t, e.minimalEvent("checkout"))

	before := time.Now()
	r := e.do(t, http.MethodPost, "/events", e.token, e.minimalEvent("checkout"))
	after := time.Now()
	p := requireProblem(t, r, http.StatusTooManyRequests)
	assert.Contains(t, p["detail"], "quota of 3 accepted events a day (UTC) is used up")
	requireRetryAtMidnight(t, r.header.Get("Retry-After"), before, after)
	events, _ := items(t, e.get(t, "/events"))
	assert.Len(t, events, 3, "nothing more was stored")

	// The account's own quota: two more fit; a batch of four valid events
	// and an invalid one gets two accepted, two 429s and one 400.
	five := 5
	_, err := e.store.Accounts.SetAccountQuotas(context.Background(), e.account, accountdb.QuotaUpdate{DailyEvents: &five})
	require.NoError(t, err)
	batch := []any{e.minimalEvent("checkout"), map[string]any{"type": "checkout"}, e.minimalEvent("checkout"),
		e.minimalEvent("checkout"), e.minimalEvent("checkout")}
	before = time.Now()
	r = e.do(t, http.MethodPost, "/events/batch", e.token, map[string]any{"events": batch})
	after = time.Now()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	requireRetryAtMidnight(t, r.header.Get("Retry-After"), before, after)
	var out struct{ Items []map[string]any }
	require.NoError(t, json.Unmarshal(r.body, &out))
	var statuses []float64
	for i, it := range out.Items {
		statuses = append(statuses, it["status"].(float64))
		if it["status"] == 429.0 {
			p := it["problem"].(map[string]any)
			assert.EqualValues(t, 429, p["status"], "item %d", i)
			assert.Contains(t, p["detail"], "quota of 5 accepted events a day (UTC) is used up", "item %d", i)
		}
	}
	assert.Equal(t, []float64{202, 400, 202, 429, 429}, statuses)
	assert.Equal(t, map[string]any{"limit": 5.0, "used": 5.0}, dailyEvents())

	// Another account has its own count.
	_, tok := e.otherAccount(t)
	r = e.do(t, http.MethodGet, "/account", tok, nil)
	assert.Equal(t, map[string]any{"limit": 3.0, "used": 0.0}, r.object(t)["limits"].(map[string]any)["dailyEvents"])
}
