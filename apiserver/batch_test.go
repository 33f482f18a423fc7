package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/internal/tcpproxy"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
)

// batchItems posts the batch, requires a 200 and returns its items.
func (e *env) batchItems(t *testing.T, body any) []map[string]any {
	t.Helper()
	r := e.do(t, http.MethodPost, "/events/batch", e.token, body)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	var out struct{ Items []map[string]any }
	require.NoError(t, json.Unmarshal(r.body, &out), "%s", r.body)
	return out.Items
}

// itemProblem checks one item's problem and returns its field errors.
func itemProblem(t *testing.T, it map[string]any, status int) map[string]string {
	t.Helper()
	require.EqualValues(t, status, it["status"], "%v", it)
	assert.NotContains(t, it, "EventRef")
	p, ok := it["problem"].(map[string]any)
	require.True(t, ok, "%v", it)
	assert.EqualValues(t, status, p["status"])
	assert.Equal(t, http.StatusText(status), p["title"])
	assert.NotEmpty(t, p["detail"])
	assert.Equal(t, p["detail"], p["Message"])
	fields := map[string]string{}
	errs, _ := p["errors"].([]any)
	for _, fe := range errs {
		m := fe.(map[string]any)
		fields[m["field"].(string)] = m["message"].(string)
	}
	return fields
}

// Each event gets the answer POST /events would give it; the valid ones
// are stored as POST /events stores them.
func TestBatchAnswersEachEvent(t *testing.T) {
	t.Parallel()
	notified := make(chan struct{}, 10)
	e := newEnv(t, func(o *apiserver.Options) { o.Notify = func() { notified <- struct{}{} } })
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	single := e.acceptEvent(t, e.minimalEvent("checkout"), header{"Idempotency-Key", "header-key"})

	snake := e.minimalEvent("checkout")
	snake["system_version"] = "1"
	badEmail := e.minimalEvent("checkout")
	badEmail["customer"] = map[string]any{"email": "not-an-address"}
	keyed := e.fullEvent("checkout")
	keyed["idempotencyKey"] = "order-7"
	sameKey := e.minimalEvent("checkout")
	sameKey["idempotencyKey"] = "order-7"
	replay := e.minimalEvent("checkout")
	replay["idempotencyKey"] = "header-key"
	mismatch := e.minimalEvent("checkout")
	mismatch["system"] = "pos"
	mismatch["idempotencyKey"] = "header-key"
	badKey := e.minimalEvent("checkout")
	badKey["idempotencyKey"] = "bad key"
	big := e.minimalEvent("checkout")
	big["metadata"] = map[string]any{"note": strings.Repeat("x", apiserver.DefaultMaxBodyBytes)}

	its := e.batchItems(t, map[string]any{"events": []any{
		e.minimalEvent("checkout"), // 0
		snake,                      // 1
		e.minimalEvent("Checkout"), // 2
		badEmail,                   // 3
		keyed,                      // 4
		sameKey,                    // 5
		replay,                     // 6
		mismatch,                   // 7
		badKey,                     // 8
		"not an object",            // 9
		big,                        // 10
	}})
	require.Len(t, its, 11)
	for i, it := range its {
		assert.EqualValues(t, i, it["index"])
	}
	for _, i := range []int{0, 4} {
		require.EqualValues(t, http.StatusAccepted, its[i]["status"], "%v", its[i])
		ref := its[i]["EventRef"].(string)
		assert.True(t, store.ValidID("evt", ref))
		assert.Equal(t, fmt.Sprintf("Your event (%s) was accepted for processing.", ref), its[i]["Message"])
		assert.NotContains(t, its[i], "problem")
	}
	assert.Contains(t, itemProblem(t, its[1], http.StatusBadRequest)["system_version"], `did you mean "systemVersion"`)
	assert.Contains(t, itemProblem(t, its[2], http.StatusUnprocessableEntity), "type")
	assert.Contains(t, itemProblem(t, its[3], http.StatusBadRequest), "customer.email")
	assert.Contains(t, itemProblem(t, its[5], http.StatusUnprocessableEntity)["idempotencyKey"], "earlier event of this batch")
	assert.Equal(t, map[string]any{"index": 6.0, "status": 202.0, "EventRef": single,
		"Message": fmt.Sprintf("Your event (%s) was accepted for processing.", single)}, its[6], "the header's key space")
	assert.Contains(t, itemProblem(t, its[7], http.StatusUnprocessableEntity), "idempotencyKey")
	assert.Contains(t, itemProblem(t, its[8], http.StatusBadRequest), "idempotencyKey")
	itemProblem(t, its[9], http.StatusBadRequest)
	itemProblem(t, its[10], http.StatusRequestEntityTooLarge)

	// Stored as POST /events stores them: every field, returned alike.
	got := e.get(t, "/events/"+its[4]["EventRef"].(string)).object(t)
	for k, v := range e.fullEvent("checkout") {
		if k != "transaction" {
			assert.Equal(t, jsonRoundTrip(t, v), got[k], k)
		}
	}
	assert.Equal(t, "2026-11-20T09:00:00.000Z", got["transaction"].(map[string]any)["date"])
	list, _ := items(t, e.get(t, "/events"))
	assert.Len(t, list, 3, "the single event and the batch's two")
	assert.Len(t, notified, 2, "the single accept and the batch, once")

	// The batch's key answers a later POST /events with its event.
	r := e.do(t, http.MethodPost, "/events", e.token, keyed, header{"Idempotency-Key", "order-7"})
	requireProblem(t, r, http.StatusBadRequest, "idempotencyKey") // the header's body has no such field
	delete(keyed, "idempotencyKey")
	assert.Equal(t, its[4]["EventRef"], e.acceptEvent(t, keyed, header{"Idempotency-Key", "order-7"}))
}

// A batch of invalid events is still a 200, with every problem, and
// stores nothing.
func TestBatchOfInvalidEventsIs200(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	noType := e.minimalEvent("checkout")
	delete(noType, "type")
	its := e.batchItems(t, map[string]any{"events": []any{noType, e.minimalEvent("unknown"), 42}})
	require.Len(t, its, 3)
	assert.Contains(t, itemProblem(t, its[0], http.StatusBadRequest), "type")
	assert.Contains(t, itemProblem(t, its[1], http.StatusUnprocessableEntity), "type")
	itemProblem(t, its[2], http.StatusBadRequest)
	list, _ := items(t, e.get(t, "/events"))
	assert.Empty(t, list)
}

// What makes the whole batch unreadable is one problem for all of it.
func TestBatchAsAWhole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	ev := e.minimalEvent("checkout")
	many := make([]any, 501)
	for i := range many {
		many[i] = ev
	}
	p := requireProblem(t, e.do(t, http.MethodPost, "/events/batch", e.token, map[string]any{"events": many}), http.StatusRequestEntityTooLarge)
	assert.Contains(t, p["detail"], "at most 500")

	huge := `{"events":[{"metadata":{"x":"` + strings.Repeat("x", 8<<20) + `"}}]}`
	p = requireProblem(t, e.do(t, http.MethodPost, "/events/batch", e.token, huge), http.StatusRequestEntityTooLarge)
	assert.Contains(t, p["detail"], "8388608")

	for name, body := range map[string]string{
		"malformed":       `{"events":[{"type":"checkout"},]}`,
		"truncated":       `{"events":[{"type":"checkout"}`,
		"no events":       `{}`,
		"empty":           `{"events":[]}`,
		"not an array":    `{"events":{}}`,
		"an unknown key":  `{"events":[],"event":[]}`,
		"a JSON array":    `[]`,
		"trailing values": `{"events":[]} {}`,
	} {
		t.Run(name, func(t *testing.T) {
			requireProblem(t, e.do(t, http.MethodPost, "/events/batch", e.token, body), http.StatusBadRequest)
		})
	}
	requireProblem(t, e.do(t, http.MethodPost, "/events/batch", e.token, `{"events":[]}`, header{"Content-Type", "text/plain"}),
		http.StatusUnsupportedMediaType)
	requireProblem(t, e.do(t, http.MethodPost, "/events/batch", e.tokenFor(t, e.account, auth.GroupReadonly), map[string]any{"events": []any{ev}}),
		http.StatusForbidden)
	events := e.tokenFor(t, e.account, auth.GroupEvents)
	r := e.do(t, http.MethodPost, "/events/batch", events, map[string]any{"events": []any{ev}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	list, _ := items(t, e.get(t, "/events"))
	assert.Len(t, list, 1, "only the events group's batch")
}

// 500 events are accepted in one request, each with a workflow order.
func TestBatchOfFiveHundred(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	evs := make([]any, 500)
	for i := range evs {
		ev := e.minimalEvent("checkout")
		ev["customer"] = map[string]any{"email": fmt.Sprintf("c%d@example.com", i)}
		ev["idempotencyKey"] = fmt.Sprintf("k-%d", i)
		evs[i] = ev
	}
	its := e.batchItems(t, map[string]any{"events": evs})
	refs := map[string]bool{}
	for _, it := range its {
		require.EqualValues(t, http.StatusAccepted, it["status"], "%v", it)
		refs[it["EventRef"].(string)] = true
	}
	assert.Len(t, refs, 500)
	pending, _, err := e.store.Events.OutboxBacklog(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 500, pending, "one start order per event")

	again := e.batchItems(t, map[string]any{"events": evs})
	for i, it := range again {
		assert.Equal(t, its[i]["EventRef"], it["EventRef"], "a repeated batch is replayed")
	}
	pending, _, err = e.store.Events.OutboxBacklog(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 500, pending, "and starts nothing new")
}

// With PostgreSQL unreachable the whole batch is a 503 with Retry-After.
func TestBatchWithDatabaseDown(t *testing.T) {
	t.Parallel()
	proxy := tcpproxy.Start(t, "127.0.0.1:5432")
	dsn := testdb.NewURL(t)
	direct, err := sqlx.Open("postgres", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { direct.Close() })
	_, err = schema.Migrate(context.Background(), direct)
	require.NoError(t, err)
	db, err := sqlx.Open("postgres", strings.Replace(dsn, "127.0.0.1:5432", proxy.Addr(), 1)+"&connect_timeout=2")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	e := newEnvWith(t, storeset.New(db, "P7D"))
	e.create(t, "/event-types", map[string]any{"name": "checkout"})

	proxy.Cut()
	r := e.do(t, http.MethodPost, "/events/batch", e.token, map[string]any{"events": []any{e.minimalEvent("checkout")}})
	requireProblem(t, r, http.StatusServiceUnavailable)
	assert.Equal(t, "5", r.header.Get("Retry-After"))
	var n int
	require.NoError(t, direct.Get(&n, `SELECT count(*) FROM events`))
	assert.Zero(t, n)
}

// jsonRoundTrip is v as it reads back from JSON.
func jsonRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
