package apiserver_test

import (
	"golang.org/x/net/html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFeedbackPageProductRatings: the feedback page asks for each
// product's optional rating and comment and the consent to be named;
// what it stores shows in the API and the public list; bad answers get
// the form again (400) with the answers kept, and a product the event
// does not have gets the 400 page.
func TestFeedbackPageProductRatings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	ev := e.minimalEvent("checkout")
	ev["customer"] = map[string]any{"email": "greta@example.com", "firstName": "Greta", "lastName": "Zimmermann"}
	ev["products"] = []any{
		map[string]any{"name": "Rain jacket", "sku": "JKT-1", "imageUrl": "https://cdn.example/jkt.png"},
		map[string]any{"name": "Boots <B2>", "sku": "BOOT-2"},
	}
	id := e.acceptEvent(t, ev)
	link := e.feedbackLinks.URL(id)
	base := func() url.Values {
		u, _ := url.Parse(link)
		return url.Values{"event": {u.Query().Get("event")}, "sig": {u.Query().Get("sig")}}
	}

	doc := requireHTML(t, e.page(t, http.MethodGet, pathOf(t, link), "", ""), http.StatusOK)
	for i := range 2 {
		assert.Len(t, find(doc, "input", map[string]string{"type": "radio", "name": "product." + string(rune('0'+i)) + ".rating"}), 5)
		assert.Len(t, find(doc, "textarea", map[string]string{"name": "product." + string(rune('0'+i)) + ".comment"}), 1)
	}
	assert.Len(t, find(doc, "img", map[string]string{"src": "https://cdn.example/jkt.png"}), 1, "each product shown with its image")
	assert.Contains(t, text(doc), "Boots <B2>")
	consent := find(doc, "input", map[string]string{"type": "checkbox", "name": "showName", "value": "1"})
	require.Len(t, consent, 1)
	assert.False(t, hasAttribute(consent[0], "checked"), "off by default")

	// Bad answers: the form again, 400, everything kept.
	bad := base()
	bad.Set("rating", "4")
	bad.Set("comment", "shop comment")
	bad.Set("product.0.rating", "7")
	bad.Set("product.0.comment", "jacket comment")
	bad.Set("product.1.rating", "2")
	bad.Set("product.1.comment", strings.Repeat("x", 2001))
	bad.Set("showName", "1")
	doc = requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, bad.Encode()), http.StatusBadRequest)
	summary := find(doc, "div", map[string]string{"class": "error-summary"})
	require.Len(t, summary, 1)
	links := find(summary[0], "a", nil)
	require.Len(t, links, 2)
	assert.Equal(t, "#product-0-rating", attr(links[0], "href"))
	assert.Contains(t, text(links[0]), "Rain jacket", "the message names the product")
	assert.Equal(t, "#product-1-comment", attr(links[1], "href"))
	assert.Len(t, find(doc, "input", map[string]string{"id": "product-0-rating"}), 1, "the summary links to the field")
	assert.Len(t, find(doc, "textarea", map[string]string{"id": "product-1-comment"}), 1)
	assert.True(t, checkedInput(doc, "rating", "4"))
	assert.True(t, checkedInput(doc, "product.1.rating", "2"))
	assert.True(t, checkedInput(doc, "showName", "1"))
	assert.Equal(t, "jacket comment", text(find(doc, "textarea", map[string]string{"name": "product.0.comment"})[0]))
	nothing, _ := items(t, e.get(t, "/reviews"))
	assert.Empty(t, nothing, "nothing stored")

	// A product the event does not have, or a field the form never has.
	for _, field := range []string{"product.2.rating", "product.10.rating", "product.01.rating"} {
		f := base()
		f.Set("rating", "4")
		f.Set(field, "5")
		requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, f.Encode()), http.StatusBadRequest)
	}
	nothing, _ = items(t, e.get(t, "/reviews"))
	assert.Empty(t, nothing)

	// Products rated without a shop rating, named with consent.
	good := base()
	good.Set("product.1.rating", "5")
	good.Set("product.1.comment", "dry feet \u202eall day")
	good.Set("showName", "1")
	requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, good.Encode()), http.StatusOK)
	reviews, _ := items(t, e.get(t, "/reviews"))
	require.Len(t, reviews, 1)
	rev := reviews[0]
	assert.Nil(t, rev["rating"])
	assert.Equal(t, "Greta Z.", rev["author"])
	products := rev["products"].([]any)
	require.Len(t, products, 1)
	p := products[0].(map[string]any)
	assert.Equal(t, 5.0, p["rating"])
	assert.Equal(t, "dry feet all day", p["comment"], "bidirectional overrides removed")
	assert.Equal(t, "BOOT-2", p["product"].(map[string]any)["sku"])

	// The page shows the answer so far; unticked, the author is anonymous.
	doc = requireHTML(t, e.page(t, http.MethodGet, pathOf(t, link), "", ""), http.StatusOK)
	assert.True(t, checkedInput(doc, "product.1.rating", "5"))
	assert.True(t, checkedInput(doc, "showName", "1"))
	good.Del("showName")
	requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, good.Encode()), http.StatusOK)
	assert.Equal(t, "Verified customer", e.get(t, "/reviews/"+rev["id"].(string)).object(t)["author"])
}

func hasAttribute(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// checkedInput reports whether the input name with value is checked.
func checkedInput(doc *html.Node, name, value string) bool {
	for _, n := range find(doc, "input", map[string]string{"name": name, "value": value}) {
		if hasAttribute(n, "checked") {
			return true
		}
	}
	return false
}
