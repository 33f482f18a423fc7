package apiserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

// reviewProducts are the products of the events of these tests.
var reviewProducts = []any{
	map[string]any{"name": "Rain jacket", "sku": "JKT-1", "gtin": "4006381333931", "brand": "Acme",
		"url": "https://shop.example/jkt", "imageUrl": "https://shop.example/jkt.jpg"},
	map[string]any{"name": "Boots", "sku": "BOOT-2", "mpn": "B2"},
}

// reviewed accepts an event with reviewProducts for customer Greta
// Zimmermann and stores its review as the feedback page would; it returns
// the review's id.
func (e *env) reviewed(t *testing.T, in reviewdb.ReviewInput) (reviewID, eventID string) {
	t.Helper()
	if list, _ := items(t, e.get(t, "/event-types?name=checkout")); len(list) == 0 {
		e.create(t, "/event-types", map[string]any{"name": "checkout"})
	}
	ev := e.minimalEvent("checkout")
	ev["customer"] = map[string]any{"email": "greta@example.com", "firstName": "Greta", "lastName": "Zimmermann", "reference": "C-7"}
	ev["products"] = reviewProducts
	in.EventID = e.acceptEvent(t, ev)
	if in.Locale == "" {
		in.Locale = "en"
	}
	r, _, err := e.store.Reviews.SaveReview(context.Background(), in)
	require.NoError(t, err)
	return r.ID, in.EventID
}

func TestReviewsAndProductReviews(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first, firstEvent := e.reviewed(t, reviewdb.ReviewInput{Rating: 4, Comment: "good", ShowName: true, Products: []reviewdb.ProductRating{
		{Index: 0, Rating: 4, Comment: "dry"}, {Index: 1, Rating: 5}}})
	second, _ := e.reviewed(t, reviewdb.ReviewInput{Products: []reviewdb.ProductRating{{Index: 0, Rating: 5, Comment: "warm"}}})
	e.reviewed(t, reviewdb.ReviewInput{Rating: 5, Locale: "de", Products: []reviewdb.ProductRating{{Index: 0, Rating: 4}}})
	e.reviewed(t, reviewdb.ReviewInput{Rating: 4, Products: []reviewdb.ProductRating{{Index: 0, Rating: 4}}})

	rev := e.get(t, "/reviews/"+first).object(t)
	assert.Equal(t, "Greta Z.", rev["author"], "the customer agreed to be named")
	assert.Equal(t, "published", rev["status"])
	assert.Equal(t, true, rev["public"])
	assert.Nil(t, rev["reportReason"])
	assert.Nil(t, rev["reply"])
	products := rev["products"].([]any)
	require.Len(t, products, 2)
	jacket := products[0].(map[string]any)
	assert.Equal(t, map[string]any{"name": "Rain jacket", "sku": "JKT-1", "gtin": "4006381333931", "mpn": nil, "brand": "Acme",
		"url": "https://shop.example/jkt", "imageUrl": "https://shop.example/jkt.jpg"}, jacket["product"])
	assert.Equal(t, first, jacket["reviewId"])
	assert.Equal(t, firstEvent, jacket["eventId"])
	assert.Equal(t, 4.0, jacket["rating"])
	assert.Equal(t, "dry", jacket["comment"])
	assert.Equal(t, jacket, e.get(t, "/product-reviews/"+jacket["id"].(string)).object(t))

	onlyProducts := e.get(t, "/reviews/"+second).object(t)
	assert.Nil(t, onlyProducts["rating"], "a product rated without a shop rating")
	assert.Equal(t, "Verified customer", onlyProducts["author"])
	event := e.get(t, "/events/"+onlyProducts["eventId"].(string)).object(t)
	assert.Nil(t, event["review"].(map[string]any)["rating"])

	// Lists and their filters.
	all, _ := items(t, e.get(t, "/product-reviews"))
	assert.Len(t, all, 5)
	for query, want := range map[string]int{
		"sku=JKT-1": 4, "gtin=4006381333931": 4, "mpn=B2": 1, "sku=BOOT-2&minRating=5": 1, "sku=jkt-1": 0,
		"minRating=5": 2, "status=published": 5, "status=reported": 0, "sku=JKT-1&gtin=4006381333931&mpn=B2": 0,
	} {
		got, _ := items(t, e.get(t, "/product-reviews?"+query))
		assert.Len(t, got, want, query)
	}
	page, next := items(t, e.get(t, "/product-reviews?limit=2"))
	require.Len(t, page, 2)
	rest, _ := items(t, e.get(t, "/product-reviews?limit=10&cursor="+url.QueryEscape(next.(string))))
	assert.Equal(t, ids(all), append(ids(page), ids(rest)...), "keyset pages, newest first")
	withProducts, _ := items(t, e.get(t, "/reviews?minRating=4"))
	assert.Len(t, withProducts, 3, "a review without a shop rating matches no rating filter")

	for _, bad := range []struct{ query, field string }{
		{"status=hidden", "status"}, {"minRating=0", "minRating"}, {"minRating=x", "minRating"}, {"rating=1", "rating"},
		{"sku=" + strings.Repeat("x", 1025), "sku"}, {"createdFrom=yesterday", "createdFrom"}, {"limit=201", "limit"},
		{"cursor=" + url.QueryEscape(store.Cursor{ID: first}.Encode()), "cursor"}, {"skus=JKT-1", "skus"},
	} {
		requireProblem(t, e.get(t, "/product-reviews?"+bad.query), http.StatusBadRequest, bad.field)
	}
	requireProblem(t, e.get(t, "/reviews?status=deleted"), http.StatusBadRequest, "status")

	// Summaries: from the aggregate rows, one decimal, half up.
	summary := func(query string) map[string]any {
		t.Helper()
		r := e.get(t, "/products/summary?"+query)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		return r.object(t)
	}
	jacketSummary := map[string]any{"count": 4.0, "average": 4.3, // 17 / 4 = 4.25
		"distribution": map[string]any{"1": 0.0, "2": 0.0, "3": 0.0, "4": 3.0, "5": 1.0}}
	assert.Equal(t, jacketSummary, summary("sku=JKT-1"))
	assert.Equal(t, jacketSummary, summary("gtin=4006381333931"))
	assert.Equal(t, map[string]any{"count": 0.0, "average": nil,
		"distribution": map[string]any{"1": 0.0, "2": 0.0, "3": 0.0, "4": 0.0, "5": 0.0}}, summary("mpn=UNKNOWN"), "nobody rated it yet")
	raw := e.get(t, "/products/summary?sku=JKT-1")
	assert.Contains(t, string(raw.body), `"average":4.3`, "one decimal place")
	for _, bad := range []string{"", "sku=JKT-1&gtin=4006381333931", "sku=", "sku=JKT-1&limit=5", "ean=1", "sku=a&sku=b"} {
		requireProblem(t, e.get(t, "/products/summary?"+bad), http.StatusBadRequest)
	}
	shop := e.get(t, "/reviews/summary").object(t)
	assert.Equal(t, map[string]any{"count": 3.0, "average": 4.3, // 13 / 3 = 4.33
		"distribution": map[string]any{"1": 0.0, "2": 0.0, "3": 0.0, "4": 2.0, "5": 1.0}}, shop)
	requireProblem(t, e.get(t, "/reviews/summary?cursor=x"), http.StatusBadRequest, "cursor")

	// Every access group reads; another account sees nothing.
	for _, group := range []string{auth.GroupEvents, auth.GroupReadonly} {
		tok := e.tokenFor(t, e.account, group)
		for _, path := range []string{"/reviews/" + first, "/product-reviews", "/product-reviews/" + jacket["id"].(string),
			"/products/summary?sku=JKT-1", "/reviews/summary", "/reviews/" + first + "/history"} {
			assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, path, tok, nil).status, "%s %s", group, path)
		}
	}
	_, other := e.otherAccount(t)
	for _, path := range []string{"/reviews/" + first, "/product-reviews/" + jacket["id"].(string), "/reviews/" + first + "/history"} {
		requireProblem(t, e.do(t, http.MethodGet, path, other, nil), http.StatusNotFound)
	}
	list, _ := items(t, e.do(t, http.MethodGet, "/product-reviews", other, nil))
	assert.Empty(t, list)
	assert.EqualValues(t, 0, e.do(t, http.MethodGet, "/products/summary?sku=JKT-1", other, nil).object(t)["count"])
	assert.EqualValues(t, 0, e.do(t, http.MethodGet, "/reviews/summary", other, nil).object(t)["count"])
	for _, path := range []string{"/product-reviews/prv-1", "/product-reviews/" + first, "/reviews/rev-1/history"} {
		requireProblem(t, e.get(t, path), http.StatusNotFound)
	}
}

func TestReportReview(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.reviewed(t, reviewdb.ReviewInput{Rating: 1, Comment: "awful", Products: []reviewdb.ProductRating{{Index: 0, Rating: 1}}})
	report := func(tok string, body any) response {
		t.Helper()
		return e.do(t, http.MethodPost, "/reviews/"+id+"/report", tok, body)
	}
	for _, bad := range []struct {
		body  string
		field string
	}{
		{`{}`, "reason"}, {`{"reason":"boring"}`, "reason"}, {`{"reason":"spam","note":"` + strings.Repeat("n", 2001) + `"}`, "note"},
		{`{"reason":"spam","hide":true}`, "hide"}, {`{"reason":null}`, "reason"},
	} {
		requireProblem(t, report(e.token, bad.body), http.StatusBadRequest, bad.field)
	}
	requireProblem(t, report(e.token, `{"reason":`), http.StatusBadRequest)
	requireProblem(t, e.do(t, http.MethodPost, "/reviews/"+id+"/report", e.token, `{"reason":"spam"}`, header{"Content-Type", "text/plain"}),
		http.StatusUnsupportedMediaType)
	for _, group := range []string{auth.GroupEvents, auth.GroupReadonly} {
		requireProblem(t, report(e.tokenFor(t, e.account, group), `{"reason":"spam"}`), http.StatusForbidden)
	}
	_, other := e.otherAccount(t)
	requireProblem(t, report(other, `{"reason":"spam"}`), http.StatusNotFound)
	requireProblem(t, e.do(t, http.MethodPost, "/reviews/rev-1/report", e.token, `{"reason":"spam"}`), http.StatusNotFound)

	r := report(e.token, `{"reason":"spam","note":"same text in twelve orders \u202e"}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	got := r.object(t)
	assert.Equal(t, "reported", got["status"])
	assert.Equal(t, "spam", got["reportReason"])
	assert.Equal(t, true, got["public"], "reported for spam: still public until the operator decides")
	assert.EqualValues(t, 1, e.get(t, "/reviews/summary").object(t)["count"])

	got = report(e.token, `{"reason":"personal_data"}`).object(t)
	assert.Equal(t, "personal_data", got["reportReason"])
	assert.Equal(t, false, got["public"], "personal data: hidden at once")
	assert.Equal(t, false, got["products"].([]any)[0].(map[string]any)["public"])
	assert.EqualValues(t, 0, e.get(t, "/reviews/summary").object(t)["count"])
	assert.EqualValues(t, 0, e.get(t, "/products/summary?sku=JKT-1").object(t)["count"])
	reported, _ := items(t, e.get(t, "/product-reviews?status=reported"))
	assert.Len(t, reported, 1)

	_, _, err := e.store.Reviews.ModerateReview(context.Background(), id, review.Publish, "not personal")
	require.NoError(t, err)
	p := requireProblem(t, report(e.token, `{"reason":"personal_data"}`), http.StatusConflict)
	assert.Contains(t, p["detail"], "kept it published")
	assert.Equal(t, true, e.get(t, "/reviews/"+id).object(t)["public"])

	history, _ := items(t, e.get(t, "/reviews/"+id+"/history"))
	require.Len(t, history, 4)
	assert.Equal(t, map[string]any{"action": "published", "status": "published", "reason": nil, "note": "not personal",
		"by": "operator", "at": history[0]["at"]}, history[0])
	assert.Equal(t, "same text in twelve orders", history[2]["note"], "bidirectional overrides removed")
	assert.Equal(t, clientOf(t, e.token), history[2]["by"])
	assert.Equal(t, "created", history[3]["action"])
	page, next := items(t, e.get(t, "/reviews/"+id+"/history?limit=3"))
	require.Len(t, page, 3)
	last, none := items(t, e.get(t, "/reviews/"+id+"/history?cursor="+url.QueryEscape(next.(string))))
	assert.Nil(t, none)
	assert.Equal(t, history, append(page, last...))
	requireProblem(t, e.get(t, "/reviews/"+id+"/history?cursor="+url.QueryEscape(store.Cursor{ID: id}.Encode())), http.StatusBadRequest, "cursor")

	_, _, err = e.store.Reviews.ModerateReview(context.Background(), id, review.Remove, "fake")
	require.NoError(t, err)
	p = requireProblem(t, report(e.token, `{"reason":"spam"}`), http.StatusConflict)
	assert.Contains(t, p["detail"], "removed")
}

func TestReplies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.reviewed(t, reviewdb.ReviewInput{Rating: 2})
	put := func(tok string, body any) response {
		t.Helper()
		return e.do(t, http.MethodPut, "/reviews/"+id+"/reply", tok, body)
	}
	for _, bad := range []string{`{}`, `{"text":""}`, `{"text":"  \n\t "}`, `{"text":"\u202e\u2066"}`, `{"text":7}`,
		`{"text":"` + strings.Repeat("é", 2001) + `"}`, `{"text":"x","by":"me"}`} {
		requireProblem(t, put(e.token, bad), http.StatusBadRequest)
	}
	for _, group := range []string{auth.GroupEvents, auth.GroupReadonly} {
		tok := e.tokenFor(t, e.account, group)
		requireProblem(t, put(tok, `{"text":"hi"}`), http.StatusForbidden)
		requireProblem(t, e.do(t, http.MethodDelete, "/reviews/"+id+"/reply", tok, nil), http.StatusForbidden)
	}
	_, other := e.otherAccount(t)
	requireProblem(t, put(other, `{"text":"hi"}`), http.StatusNotFound)
	requireProblem(t, e.do(t, http.MethodDelete, "/reviews/"+id+"/reply", e.token, nil), http.StatusNotFound)

	// Hostile text comes back intact and escaped only as JSON escapes it;
	// the bidirectional overrides and control characters are removed.
	hostile := "</script><b>Sorry</b> & thanks ]]> \"quoted\"\nline two\ttab \u202eevil\u2069 \x07bell"
	want := "</script><b>Sorry</b> & thanks ]]> \"quoted\"\nline two\ttab evil bell"
	r := put(e.token, map[string]any{"text": hostile})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Contains(t, string(r.body), `"text":"</script><b>Sorry</b> & thanks ]]> \"quoted\"\nline two\ttab evil bell"`,
		"JSON escapes quotes and line breaks only")
	reply := r.object(t)
	assert.Equal(t, want, reply["text"])
	assert.Equal(t, reply["createdAt"], reply["updatedAt"])
	var decoded struct{ Reply struct{ Text string } }
	require.NoError(t, json.Unmarshal(e.get(t, "/reviews/"+id).body, &decoded))
	assert.Equal(t, want, decoded.Reply.Text)

	longest := strings.Repeat("é", 2000)
	r = put(e.token, map[string]any{"text": longest})
	require.Equal(t, http.StatusOK, r.status, "2,000 characters are fine")
	assert.Equal(t, reply["createdAt"], r.object(t)["createdAt"], "replacing keeps createdAt")

	res := e.do(t, http.MethodDelete, "/reviews/"+id+"/reply", e.token, nil)
	require.Equal(t, http.StatusNoContent, res.status, "%s", res.body)
	assert.Empty(t, res.body)
	assert.Nil(t, e.get(t, "/reviews/"+id).object(t)["reply"])
	requireProblem(t, e.do(t, http.MethodDelete, "/reviews/"+id+"/reply", e.token, nil), http.StatusNotFound)

	history, _ := items(t, e.get(t, "/reviews/"+id+"/history"))
	var actions []string
	for _, h := range history {
		actions = append(actions, h["action"].(string))
	}
	assert.Equal(t, []string{"reply_deleted", "replied", "replied", "created"}, actions)
}

// TestShopCannotHideReviews calls every route a shop can change anything
// with — each documented write, on the reviews, their events, customers,
// the account and its settings — and shows that every review stays
// public, except the one reported for personal data. Routes added later
// are called too: with the ids of the review, its event and a product
// review in turn.
func TestShopCannotHideReviews(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id, eventID := e.reviewed(t, reviewdb.ReviewInput{Rating: 1, Comment: "never again", Products: []reviewdb.ProductRating{{Index: 0, Rating: 1}}})
	hidden, _ := e.reviewed(t, reviewdb.ReviewInput{Rating: 1, Comment: "the courier's number is 0151 2345678"})
	rev, err := e.store.Reviews.Review(ctx, e.account, id)
	require.NoError(t, err)
	productReview := rev.Products[0].ID
	shopBefore, err := e.store.Reviews.ReviewAggregate(ctx, e.account)
	require.NoError(t, err)
	require.EqualValues(t, 2, shopBefore.Count)

	hook := e.create(t, "/webhooks", map[string]any{"url": "https://hooks.example.com/x", "events": []string{"review.created"}})
	settings, _ := items(t, e.get(t, "/invite-settings"))
	types, _ := items(t, e.get(t, "/event-types"))
	calls := map[string][]apiCall{
		"POST /reviews/{id}/report": {
			{path: "/reviews/" + id + "/report", body: `{"reason":"spam"}`},
			{path: "/reviews/" + id + "/report", body: `{"reason":"offensive"}`},
			{path: "/reviews/" + id + "/report", body: `{"reason":"not_an_experience"}`},
			{path: "/reviews/" + hidden + "/report", body: `{"reason":"personal_data"}`},
		},
		"PUT /reviews/{id}/reply":           {{path: "/reviews/" + id + "/reply", body: `{"text":"please remove this"}`}},
		"DELETE /reviews/{id}/reply":        {{path: "/reviews/" + id + "/reply"}},
		"POST /events/{id}/cancel":          {{path: "/events/" + eventID + "/cancel"}},
		"POST /events/{id}/retry":           {{path: "/events/" + eventID + "/retry"}},
		"PATCH /event-types/{id}":           {{path: "/event-types/" + types[0]["id"].(string), body: `{"active":false}`}},
		"PATCH /invite-settings/{id}":       {{path: "/invite-settings/" + settings[0]["id"].(string), body: `{"active":false}`}},
		"POST /customers/erase":             {{path: "/customers/erase", body: `{"email":"greta@example.com"}`}, {path: "/customers/erase", body: `{"reference":"C-7"}`}},
		"POST /suppressions":                {{path: "/suppressions", body: `{"address":"greta@example.com"}`}},
		"DELETE /suppressions/{address}":    {{path: "/suppressions/greta@example.com"}},
		"PATCH /account":                    {{path: "/account", body: `{"displayName":"Hidden reviews"}`}},
		"PATCH /webhooks/{id}":              {{path: "/webhooks/" + hook["id"].(string), body: `{"enabled":false}`}},
		"POST /webhooks/{id}/rotate-secret": {{path: "/webhooks/" + hook["id"].(string) + "/rotate-secret"}},
		"DELETE /webhooks/{id}":             {{path: "/webhooks/" + hook["id"].(string)}},
	}
	for _, rt := range apiserver.Routes() {
		if rt.Method == http.MethodGet || rt.Groups == nil {
			continue
		}
		key := rt.Method + " " + rt.Path
		cs, known := calls[key]
		if !known { // every other write, with each id we have, and an empty body
			for _, v := range []string{id, eventID, productReview, "greta@example.com"} {
				cs = append(cs, apiCall{path: strings.NewReplacer("{id}", v, "{address}", v).Replace(rt.Path), body: `{}`})
			}
		}
		for _, c := range cs {
			var body any
			if c.body != "" {
				body = c.body
			}
			res := e.do(t, rt.Method, c.path, e.token, body)
			assert.Less(t, res.status, 500, "%s %s: %s", rt.Method, c.path, res.body)
		}
	}

	after, err := e.store.Reviews.Review(ctx, e.account, id)
	require.NoError(t, err)
	assert.True(t, after.Public, "no call of the shop takes the review out of public view")
	assert.True(t, after.Products[0].Public)
	gone, err := e.store.Reviews.Review(ctx, e.account, hidden)
	require.NoError(t, err)
	assert.False(t, gone.Public, "but a report of personal data")
	shopAfter, err := e.store.Reviews.ReviewAggregate(ctx, e.account)
	require.NoError(t, err)
	assert.EqualValues(t, 1, shopAfter.Count)
	assert.EqualValues(t, 1, e.get(t, "/products/summary?sku=JKT-1").object(t)["count"])
}
