package apiserver_test

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// TestOneTextInEveryOutput: a comment typed into the feedback page with
// hostile content (markup, a CDATA end, quotes, a tab, Windows and Unicode
// line breaks, a bell and a right-to-left override) is cleaned once, when
// it comes in, and then reads the same — parsed back from each format —
// in the API's JSON, the public JSON, the JSON-LD, the widget, the verify
// page and the feed. A product name with markup and quotes (which a name
// may hold) reads the same in the invite mail, the feedback page and all
// of those. Mails carry no comment.
func TestOneTextInEveryOutput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	const (
		name    = "<b>Tom  & \"Jerry\"</b> ]]> </script> 'Wüste' \u200fx"
		typed   = " </script><script>alert(1)</script>\r\n]]> & <b>x</b> \"q\"\t\u202eevil\u202c\x07 end\u2028last line "
		comment = "</script><script>alert(1)</script>\n]]> & <b>x</b> \"q\"\tevil end\nlast line"
	)
	ev := e.minimalEvent("checkout")
	ev["customer"] = map[string]any{"email": "greta@example.com", "firstName": "Greta", "lastName": "Zimmermann"}
	ev["products"] = []any{map[string]any{"name": name, "sku": "JKT-1", "gtin": "4006381333931", "brand": "Acme",
		"url": "https://shop.example/jkt"}}
	id := e.acceptEvent(t, ev)

	// The invite mail, rendered from the stored event as the worker renders it.
	preview := e.do(t, http.MethodPost, "/templates/preview", e.token, map[string]any{"kind": "invite", "locale": "en", "eventId": id})
	require.Equal(t, http.StatusOK, preview.status, "%s", preview.body)
	mail := preview.object(t)
	assert.Contains(t, mail["text"], name, "the mail's text part")
	assert.Contains(t, textContent(mustParse(t, []byte(mail["html"].(string)))), name, "the mail's HTML part")

	// The feedback page names the product; the customer answers.
	link := e.feedbackLinks.URL(id)
	page := requireHTML(t, e.page(t, http.MethodGet, pathOf(t, link), "", ""), http.StatusOK)
	assert.Contains(t, text(page), name, "the feedback page")
	form := feedbackForm(link, "4", typed) + "&showName=1&product.0.rating=5&product.0.comment=" + url.QueryEscape(typed)
	requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, form), http.StatusOK)

	reviews, _ := items(t, e.get(t, "/reviews"))
	require.Len(t, reviews, 1)
	rid := reviews[0]["id"].(string)
	api := e.get(t, "/reviews/"+rid).object(t)
	assert.Equal(t, comment, api["comment"], "the API's JSON")
	product := api["products"].([]any)[0].(map[string]any)
	assert.Equal(t, comment, product["comment"])
	assert.Equal(t, name, product["product"].(map[string]any)["name"])

	public, _ := publicItems(t, e.anon(t, "/public/accounts/"+e.account+"/reviews"))
	require.Len(t, public, 1)
	assert.Equal(t, comment, public[0]["comment"], "the public JSON")
	pp := public[0]["products"].([]any)[0].(map[string]any)
	assert.Equal(t, comment, pp["comment"])
	assert.Equal(t, name, pp["name"])

	org := e.anon(t, "/public/accounts/"+e.account+"/reviews.jsonld").object(t)
	assert.Equal(t, comment, org["review"].([]any)[0].(map[string]any)["reviewBody"], "the account's JSON-LD")
	prod := e.anon(t, "/public/products/reviews.jsonld?account="+e.account+"&sku=JKT-1").object(t)
	assert.Equal(t, name, prod["name"], "the product's JSON-LD")
	assert.Equal(t, comment, prod["review"].([]any)[0].(map[string]any)["reviewBody"])

	widget := e.anon(t, "/public/accounts/"+e.account+"/widget?locale=en")
	require.Equal(t, http.StatusOK, widget.status)
	wdoc := mustParse(t, widget.body)
	assert.Equal(t, []string{comment}, classText(wdoc, "comment"), "the widget")
	assert.Contains(t, textContent(wdoc), name+": ", "the widget's product line")
	assert.Contains(t, textContent(wdoc), " — "+comment, "the widget's product comment")

	verify := e.anon(t, "/public/reviews/"+rid+"/verify?locale=en")
	require.Equal(t, http.StatusOK, verify.status)
	assert.Contains(t, classText(mustParse(t, verify.body), "comment"), comment, "the verify page")

	feed := e.anon(t, "/public/accounts/"+e.account+"/feeds/google-product-reviews.xml")
	require.Equal(t, http.StatusOK, feed.status)
	var parsed struct {
		Reviews []struct {
			Content string `xml:"content"`
			Name    string `xml:"products>product>product_name"`
		} `xml:"reviews>review"`
	}
	require.NoError(t, xml.Unmarshal(feed.body, &parsed))
	require.Len(t, parsed.Reviews, 1)
	assert.Equal(t, comment, parsed.Reviews[0].Content, "the feed")
	assert.Equal(t, name, parsed.Reviews[0].Name)

	for what, body := range map[string][]byte{"widget": widget.body, "verify page": verify.body, "feed": feed.body,
		"public JSON": e.anon(t, "/public/accounts/"+e.account+"/reviews").body} {
		assert.False(t, bytes.ContainsAny(body, "\a\u202e\u202c\r\u2028"), "%s: nothing the boundary removed comes back", what)
	}
}

// classText is the text of every element of doc with the class.
func classText(doc *html.Node, class string) []string {
	var out []string
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && strings.Contains(" "+attr(n, "class")+" ", " "+class+" ") {
			out = append(out, textContent(n))
		}
	}
	return out
}
