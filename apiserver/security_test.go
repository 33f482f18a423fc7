package apiserver_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/internal/testclock"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
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
		assert.Equal(t, "must not contain control characters such as line breaks", fieldMessage(t, r, field), field)
	}
	// A postal address may span lines.
	e.acceptEvent(t, event(customer("address", "1 Main St\nSpringfield")))
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
	st := store.New(testdb.New(t), "P7D")
	st.Quotas = store.Quotas{Channels: 2, EventTypes: 1}
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
