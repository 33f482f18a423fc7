package apiserver_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/internal/feedschema"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

// publicHostile is typed by a customer ("… \u202eevil\x07\tend"); the
// feedback page stores it cleaned of the override and the bell, and
// every public output must give it back intact.
const publicHostile = "</script><script>alert(1)</script> ]]> & <b>x</b> \"q\" evil\tend"

// anon sends a public request: no token, optional headers.
func (e *env) anon(t testing.TB, path string, headers ...header) response {
	t.Helper()
	return e.do(t, http.MethodGet, path, "", nil, headers...)
}

// requirePublic checks the headers of every public answer and returns
// the ETag.
func requirePublic(t testing.TB, r response, contentType string) string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "*", r.header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "public, max-age=300", r.header.Get("Cache-Control"))
	assert.Equal(t, contentType, r.header.Get("Content-Type"))
	etag := r.header.Get("ETag")
	require.Regexp(t, `^"[A-Za-z0-9_-]+"$`, etag, "a strong ETag")
	return etag
}

// requireNoPersonalData fails when the body shows the customer's email,
// mobile, address, reference, last name or the transaction's reference.
func requireNoPersonalData(t testing.TB, body []byte) {
	t.Helper()
	for _, s := range []string{"greta@example.com", "Zimmermann", "C-7", "+4912345", "1 Main St", "order-1", "ann@example.com", "Lee"} {
		assert.NotContains(t, string(body), s)
	}
}

// TestPublicReviewList: the JSON list answers anyone with the public
// reviews only (a personal-data report hides one at once, another report
// does not), their aggregate, a proof each, CORS *, public caching, a
// strong ETag that answers 304 and changes with the reviews, and nothing
// personal.
func TestPublicReviewList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	named, _ := e.reviewed(t, reviewdb.ReviewInput{Rating: 4, Comment: publicHostile, ShowName: true,
		Products: []reviewdb.ProductRating{{Index: 0, Rating: 5, Comment: publicHostile}}})
	anonymous, _ := e.reviewed(t, reviewdb.ReviewInput{Rating: 2, Comment: "meh", Locale: "de"})
	spam, _ := e.reviewed(t, reviewdb.ReviewInput{Rating: 1, Comment: "reported as spam, still public"})
	hidden, _ := e.reviewed(t, reviewdb.ReviewInput{Rating: 5, Comment: "my phone is +49 …"})
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPost, "/reviews/"+spam+"/report", e.token, `{"reason":"spam"}`).status)
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPost, "/reviews/"+hidden+"/report", e.token, `{"reason":"personal_data"}`).status)
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPut, "/reviews/"+named+"/reply", e.token, map[string]any{"text": "Thanks & " + publicHostile}).status)

	// Another account's reviews never show.
	other, _ := e.otherAccount(t)

	path := "/public/accounts/" + e.account + "/reviews"
	r := e.anon(t, path)
	etag := requirePublic(t, r, "application/json")
	requireNoPersonalData(t, r.body)
	list := r.object(t)
	assert.Equal(t, map[string]any{"displayName": "A", "logoUrl": nil}, list["account"])
	assert.Equal(t, map[string]any{"count": 3.0, "average": 2.3, // 4 + 2 + 1 over 3: the hidden one does not count
		"distribution": map[string]any{"1": 1.0, "2": 1.0, "3": 0.0, "4": 1.0, "5": 0.0}}, list["aggregate"])
	got := list["items"].([]any)
	require.Len(t, got, 3)
	assert.Equal(t, []string{spam, anonymous, named}, ids(asObjects(got)), "newest first, the personal-data report hidden")
	first := got[2].(map[string]any)
	assert.Equal(t, publicHostile, first["comment"], "JSON escapes and keeps the text")
	assert.Equal(t, "Greta Z.", first["author"])
	assert.Equal(t, "en", first["locale"])
	assert.Equal(t, 4.0, first["rating"])
	assert.Equal(t, "Thanks & "+publicHostile, first["reply"].(map[string]any)["text"])
	assert.NotEmpty(t, first["proof"])
	assert.ElementsMatch(t, []string{"id", "rating", "comment", "locale", "author", "createdAt", "updatedAt", "reply", "products", "proof"},
		keysOf(first))
	products := first["products"].([]any)
	require.Len(t, products, 1)
	assert.Equal(t, publicHostile, products[0].(map[string]any)["comment"])
	assert.Equal(t, "4006381333931", products[0].(map[string]any)["gtin"])
	assert.Equal(t, "Verifizierter Kunde", got[1].(map[string]any)["author"], "in the review's language")
	assert.Nil(t, got[1].(map[string]any)["reply"])

	// 304 on If-None-Match, also weak and among others.
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		nm := e.anon(t, path, header{"If-None-Match", inm})
		assert.Equal(t, http.StatusNotModified, nm.status, inm)
		assert.Empty(t, nm.body)
		assert.Equal(t, etag, nm.header.Get("ETag"))
		assert.Equal(t, "public, max-age=300", nm.header.Get("Cache-Control"))
	}
	assert.Equal(t, http.StatusOK, e.anon(t, path, header{"If-None-Match", `"other"`}).status)
	again := e.anon(t, path)
	assert.Equal(t, etag, again.header.Get("ETag"), "the same reviews give the same bytes (proofs are deterministic)")
	assert.Equal(t, r.body, again.body)

	// A report for another reason than personal data changes nothing the
	// public sees: still 304. One for personal data hides the review.
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPost, "/reviews/"+anonymous+"/report", e.token, `{"reason":"offensive"}`).status)
	assert.Equal(t, http.StatusNotModified, e.anon(t, path, header{"If-None-Match", etag}).status)
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPost, "/reviews/"+anonymous+"/report", e.token, `{"reason":"personal_data"}`).status)
	changed := e.anon(t, path, header{"If-None-Match", etag})
	require.Equal(t, http.StatusOK, changed.status, "a change moves the ETag")
	assert.Len(t, changed.object(t)["items"], 2)

	// Filters and pages.
	for query, want := range map[string]int{"minRating=2": 1, "minRating=1": 2, "locale=de": 0, "locale=en": 2, "locale=en-GB": 0} {
		items, _ := publicItems(t, e.anon(t, path+"?"+query))
		assert.Len(t, items, want, query)
	}
	page, next := publicItems(t, e.anon(t, path+"?limit=1"))
	require.Len(t, page, 1)
	rest, next2 := publicItems(t, e.anon(t, path+"?limit=1&cursor="+url.QueryEscape(next.(string))))
	assert.Len(t, rest, 1)
	assert.Nil(t, next2)

	// The other account's list is its own: empty.
	otherList := e.anon(t, "/public/accounts/"+other+"/reviews").object(t)
	assert.Empty(t, otherList["items"])
	assert.Equal(t, 0.0, otherList["aggregate"].(map[string]any)["count"])

	// Bad input: 4xx problems, with CORS so a page can read them.
	for q, field := range map[string]string{"minRating=6": "minRating", "minRating=x": "minRating", "limit=0": "limit",
		"locale=%3Cb%3E": "locale", "cursor=xyz": "cursor", "token=1": "token"} {
		bad := e.anon(t, path+"?"+q)
		requireProblem(t, bad, http.StatusBadRequest, field)
		assert.Equal(t, "*", bad.header.Get("Access-Control-Allow-Origin"))
	}
	for _, p := range []string{"/public/accounts/acc-nope/reviews", "/public/accounts/" + store.NewID("acc") + "/reviews",
		"/public/accounts/" + store.NewID("acc") + "/reviews.jsonld", "/public/accounts/" + store.NewID("acc") + "/jwks.json",
		"/public/accounts/" + store.NewID("acc") + "/feeds/google-product-reviews.xml"} {
		requireProblem(t, e.anon(t, p), http.StatusNotFound)
	}
	requireProblem(t, e.do(t, http.MethodPost, path, "", nil), http.StatusMethodNotAllowed)
}

// publicItems are the items of a public list and its nextCursor.
func publicItems(t testing.TB, r response) ([]map[string]any, any) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	m := r.object(t)
	return asObjects(m["items"].([]any)), m["nextCursor"]
}

func asObjects(v []any) []map[string]any {
	out := make([]map[string]any, len(v))
	for i, x := range v {
		out[i] = x.(map[string]any)
	}
	return out
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestPublicProductReviewsAndJSONLD: one product's public reviews with
// its aggregate, and the JSON-LD of the account and of a product, safe
// to paste into a script element.
func TestPublicProductReviewsAndJSONLD(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.reviewed(t, reviewdb.ReviewInput{Rating: 5, Comment: publicHostile, Products: []reviewdb.ProductRating{{Index: 0, Rating: 4, Comment: publicHostile}}})
	e.reviewed(t, reviewdb.ReviewInput{Products: []reviewdb.ProductRating{{Index: 0, Rating: 5}, {Index: 1, Rating: 1}}})

	r := e.anon(t, "/public/products/reviews?account="+e.account+"&gtin=4006381333931")
	requirePublic(t, r, "application/json")
	requireNoPersonalData(t, r.body)
	list := r.object(t)
	assert.Equal(t, map[string]any{"count": 2.0, "average": 4.5,
		"distribution": map[string]any{"1": 0.0, "2": 0.0, "3": 0.0, "4": 1.0, "5": 1.0}}, list["aggregate"])
	got := asObjects(list["items"].([]any))
	require.Len(t, got, 2)
	assert.Equal(t, publicHostile, got[1]["comment"])
	assert.Equal(t, "Rain jacket", got[1]["product"].(map[string]any)["name"])
	assert.NotEmpty(t, got[1]["proof"])
	assert.Regexp(t, `^rev-`, got[1]["reviewId"])
	boots, _ := publicItems(t, e.anon(t, "/public/products/reviews?account="+e.account+"&mpn=B2"))
	assert.Len(t, boots, 1)
	for _, q := range []string{"", "account=" + e.account, "account=" + e.account + "&sku=JKT-1&gtin=4006381333931", "sku=JKT-1",
		"account=" + e.account + "&sku=JKT-1&limit=900"} {
		requireProblem(t, e.anon(t, "/public/products/reviews?"+q), http.StatusBadRequest)
	}
	requireProblem(t, e.anon(t, "/public/products/reviews?account=acc-x&sku=JKT-1"), http.StatusNotFound)

	// JSON-LD of the account.
	ld := e.anon(t, "/public/accounts/"+e.account+"/reviews.jsonld")
	requirePublic(t, ld, "application/ld+json")
	for _, c := range []string{"<", ">", "&"} {
		assert.NotContains(t, string(ld.body), c, "embeddable in a script element")
	}
	org := ld.object(t)
	assert.Equal(t, "Organization", org["@type"])
	assert.Equal(t, "A", org["name"])
	assert.Equal(t, 5.0, org["aggregateRating"].(map[string]any)["ratingValue"])
	reviews := org["review"].([]any)
	require.Len(t, reviews, 1, "the review without a shop rating is no Review of the shop")
	assert.Equal(t, publicHostile, reviews[0].(map[string]any)["reviewBody"])
	assert.Equal(t, map[string]any{"@type": "Person", "name": "Verified customer"}, reviews[0].(map[string]any)["author"])
	requireProblem(t, e.anon(t, "/public/accounts/"+e.account+"/reviews.jsonld?limit=5"), http.StatusBadRequest, "limit")

	// JSON-LD of a product.
	pld := e.anon(t, "/public/products/reviews.jsonld?account="+e.account+"&sku=JKT-1")
	requirePublic(t, pld, "application/ld+json")
	prod := pld.object(t)
	assert.Equal(t, "Product", prod["@type"])
	assert.Equal(t, "Rain jacket", prod["name"])
	assert.Equal(t, "JKT-1", prod["sku"])
	assert.Equal(t, "4006381333931", prod["gtin"])
	assert.Equal(t, map[string]any{"@type": "AggregateRating", "ratingValue": 4.5, "reviewCount": 2.0, "bestRating": 5.0,
		"worstRating": 1.0}, prod["aggregateRating"])
	assert.Len(t, prod["review"], 2)
	requireProblem(t, e.anon(t, "/public/products/reviews.jsonld?account="+e.account+"&sku=JKT-1&cursor=x"), http.StatusBadRequest)
}

// TestPublicProofsAndVerifyPage: every proof in the list verifies with
// jwx against the published JWKS; the verify page states in the
// reader's language what the proof says and checks a proof brought to it.
func TestPublicProofsAndVerifyPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id, _ := e.reviewed(t, reviewdb.ReviewInput{Rating: 5, Comment: publicHostile})
	hiddenID, _ := e.reviewed(t, reviewdb.ReviewInput{Rating: 1, Comment: "x"})
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPost, "/reviews/"+hiddenID+"/report", e.token, `{"reason":"personal_data"}`).status)

	jr := e.anon(t, "/public/accounts/"+e.account+"/jwks.json")
	requirePublic(t, jr, "application/jwk-set+json")
	assert.NotContains(t, string(jr.body), `"d"`)
	set, err := jwk.Parse(jr.body)
	require.NoError(t, err)
	require.Equal(t, 1, set.Len())
	item := asObjects(e.anon(t, "/public/accounts/"+e.account+"/reviews").object(t)["items"].([]any))[0]
	payload, err := jws.Verify([]byte(item["proof"].(string)), jws.WithKeySet(set))
	require.NoError(t, err)
	var claims map[string]any
	require.NoError(t, json.Unmarshal(payload, &claims))
	assert.Equal(t, id, claims["reviewId"])
	assert.Equal(t, e.account, claims["accountId"])
	assert.Equal(t, "2026-11-20", claims["eventDate"], "the transaction's day (2026-11-20T10:00+01:00)")

	verify := "/public/reviews/" + id + "/verify"
	for lang, phrase := range map[string]string{"en": "real transaction on 2026-11-20", "de": "echten Kauf am 2026-11-20",
		"fr": "achat réel du 2026-11-20", "da": "rigtigt køb den 2026-11-20", "es": "compra real del 2026-11-20", "nl": "echte aankoop op 2026-11-20"} {
		p := e.anon(t, verify, header{"Accept-Language", lang + ";q=0.9, ja"})
		requirePublic(t, p, "text/html; charset=utf-8")
		assert.Equal(t, "Accept-Language", p.header.Get("Vary"))
		assert.Contains(t, p.header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
		doc, err := html.Parse(bytes.NewReader(p.body))
		require.NoError(t, err)
		assert.Contains(t, textContent(doc), phrase, lang)
		assert.Contains(t, textContent(doc), publicHostile, "the comment as text")
		assert.NotContains(t, string(p.body), "<script")
		byParam := e.anon(t, verify+"?locale="+lang)
		assert.Equal(t, p.body, byParam.body, "?locale= says the same")
	}
	// A proof brought to the page.
	ok := e.anon(t, verify+"?locale=en&proof="+url.QueryEscape(item["proof"].(string)))
	assert.Contains(t, string(ok.body), "The proof you brought is valid and matches this review as it is now.")
	bad := e.anon(t, verify+"?locale=en&proof=a.b.c")
	assert.Contains(t, string(bad.body), "not a valid proof of this shop")
	// Hidden, unknown and malformed reviews: the 404 page.
	for _, p := range []string{"/public/reviews/" + hiddenID + "/verify", "/public/reviews/" + store.NewID("rev") + "/verify",
		"/public/reviews/x/verify"} {
		nf := e.anon(t, p)
		assert.Equal(t, http.StatusNotFound, nf.status)
		assert.Equal(t, "text/html; charset=utf-8", nf.header.Get("Content-Type"))
	}
	assert.Equal(t, http.StatusBadRequest, e.anon(t, verify+"?foo=1").status)

	// A product's comment is the customer's too: the proof covers it, and
	// the page says which texts the proof covers (not the shop's reply).
	withProduct, _ := e.reviewed(t, reviewdb.ReviewInput{Rating: 4, Products: []reviewdb.ProductRating{{Index: 0, Rating: 5, Comment: "Dry in the rain"}}})
	item = asObjects(e.anon(t, "/public/accounts/"+e.account+"/reviews").object(t)["items"].([]any))[0]
	require.Equal(t, withProduct, item["id"])
	payload, err = jws.Verify([]byte(item["proof"].(string)), jws.WithKeySet(set))
	require.NoError(t, err)
	claims = nil
	require.NoError(t, json.Unmarshal(payload, &claims))
	sum := sha256.Sum256([]byte("Dry in the rain"))
	assert.Equal(t, []any{map[string]any{"gtin": "4006381333931", "rating": 5.0, "commentSha256": hex.EncodeToString(sum[:])}},
		claims["products"])
	page := e.anon(t, "/public/reviews/"+withProduct+"/verify?locale=en")
	requirePublic(t, page, "text/html; charset=utf-8")
	doc, err := html.Parse(bytes.NewReader(page.body))
	require.NoError(t, err)
	assert.Contains(t, textContent(doc), "This proof covers the ratings, the review’s comment and the comment on each product. "+
		"The shop’s reply is the shop’s own text and is not covered.")
}

func textContent(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// TestPublicWidget: server-rendered HTML for an iframe of any site, in
// the asked language and theme, with the three latest reviews and a link
// to all of them.
func TestPublicWidget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 4 {
		e.reviewed(t, reviewdb.ReviewInput{Rating: 5 - i, Comment: publicHostile, Products: []reviewdb.ProductRating{{Index: 0, Rating: 4}}})
	}
	path := "/public/accounts/" + e.account + "/widget"
	r := e.anon(t, path+"?locale=de&theme=dark")
	etag := requirePublic(t, r, "text/html; charset=utf-8")
	assert.Contains(t, r.header.Get("Content-Security-Policy"), "frame-ancestors *")
	assert.Contains(t, r.header.Get("Content-Security-Policy"), "default-src 'none'")
	assert.NotContains(t, r.header.Get("Content-Security-Policy"), "script-src")
	assert.Empty(t, r.header.Get("X-Frame-Options"))
	requireNoPersonalData(t, r.body)
	doc, err := html.Parse(bytes.NewReader(r.body))
	require.NoError(t, err)
	assert.NotContains(t, string(r.body), "<script")
	text := textContent(doc)
	assert.Contains(t, text, "Bewertet mit 3,5 von 5")
	assert.Contains(t, text, "4 Bewertungen")
	assert.Equal(t, 3, strings.Count(text, publicHostile), "the three latest")
	assert.Contains(t, string(r.body), `class="dark"`)
	assert.Contains(t, string(r.body), "view=all")
	assert.Equal(t, http.StatusNotModified, e.anon(t, path+"?locale=de&theme=dark", header{"If-None-Match", etag}).status)

	all := e.anon(t, path+"?view=all&locale=de&limit=3")
	requirePublic(t, all, "text/html; charset=utf-8")
	assert.Contains(t, string(all.body), "cursor=", "a link to older reviews")
	sku := e.anon(t, path+"?sku=JKT-1&locale=en")
	assert.Contains(t, textContent(mustParse(t, sku.body)), "Rated 4.0 out of 5")

	// Its errors are pages too.
	for _, q := range []string{"theme=blue", "view=some", "locale=../x", "colour=red"} {
		bad := e.anon(t, path+"?"+q)
		assert.Equal(t, http.StatusBadRequest, bad.status, q)
		assert.Equal(t, "text/html; charset=utf-8", bad.header.Get("Content-Type"), q)
	}
	nf := e.anon(t, "/public/accounts/"+store.NewID("acc")+"/widget")
	assert.Equal(t, http.StatusNotFound, nf.status)
	assert.Equal(t, "text/html; charset=utf-8", nf.header.Get("Content-Type"))
}

func mustParse(t *testing.T, b []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	require.NoError(t, err)
	return doc
}

// TestPublicFeed: Google's feed parses, holds every public product review
// with a comment, no hidden one and none rated without a comment (the
// feed's content is required), escapes hostile text, and carries a strong
// ETag known before the stream starts (304), which changes with the
// reviews.
func TestPublicFeed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.reviewed(t, reviewdb.ReviewInput{Rating: 4, ShowName: true, Products: []reviewdb.ProductRating{{Index: 0, Rating: 5, Comment: publicHostile},
		{Index: 1, Rating: 2, Comment: "Too small"}}})
	e.reviewed(t, reviewdb.ReviewInput{Rating: 3, Products: []reviewdb.ProductRating{{Index: 0, Rating: 3}}})
	hidden, _ := e.reviewed(t, reviewdb.ReviewInput{Products: []reviewdb.ProductRating{{Index: 0, Rating: 1, Comment: "hidden"}}})
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPost, "/reviews/"+hidden+"/report", e.token, `{"reason":"personal_data"}`).status)

	path := "/public/accounts/" + e.account + "/feeds/google-product-reviews.xml"
	r := e.anon(t, path)
	etag := requirePublic(t, r, "application/xml; charset=utf-8")
	requireNoPersonalData(t, r.body)
	require.NoError(t, feedschema.Validate(bytes.NewReader(r.body)), "Google's Product Reviews Feed 2.3:\n%s", r.body)
	var feed struct {
		Version string `xml:"version"`
		Reviews []struct {
			ID       string `xml:"review_id"`
			Reviewer struct {
				Name struct {
					Anonymous string `xml:"is_anonymous,attr"`
					Text      string `xml:",chardata"`
				} `xml:"name"`
			} `xml:"reviewer"`
			Content    string `xml:"content"`
			URL        string `xml:"review_url"`
			ProductURL string `xml:"products>product>product_url"`
		} `xml:"reviews>review"`
	}
	require.NoError(t, xml.Unmarshal(r.body, &feed))
	assert.Equal(t, "2.3", feed.Version)
	require.Len(t, feed.Reviews, 2, "neither the hidden one nor the one without a comment is in it")
	var hostileSeen bool
	for _, rv := range feed.Reviews {
		assert.Regexp(t, `^prv-`, rv.ID)
		assert.Equal(t, "Greta Z.", rv.Reviewer.Name.Text)
		assert.Empty(t, rv.Reviewer.Name.Anonymous)
		assert.Regexp(t, `^https://api\.touchpoint\.test/public/reviews/rev-[0-9a-f-]+/verify$`, rv.URL)
		assert.NotEmpty(t, rv.Content)
		assert.NotEmpty(t, rv.ProductURL)
		hostileSeen = hostileSeen || rv.Content == publicHostile
	}
	assert.True(t, hostileSeen, "escaped and intact")
	assert.NotContains(t, string(r.body), "hidden")

	assert.Equal(t, http.StatusNotModified, e.anon(t, path, header{"If-None-Match", etag}).status)
	assert.Equal(t, etag, e.anon(t, path).header.Get("ETag"))
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPut, "/reviews/"+hidden+"/reply", e.token, `{"text":"a reply"}`).status)
	assert.NotEqual(t, etag, e.anon(t, path).header.Get("ETag"), "any change of the account's reviews moves it")
	etag = e.anon(t, path).header.Get("ETag")
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPatch, "/account", e.token, `{"displayName":"New name"}`).status)
	renamed := e.anon(t, path, header{"If-None-Match", etag})
	assert.Equal(t, http.StatusOK, renamed.status, "so does the publisher's name")
	assert.Contains(t, string(renamed.body), "<name>New name</name>")
	requireProblem(t, e.anon(t, path+"?limit=1"), http.StatusBadRequest)
}

// TestPublicEndpointsAreLimitedPerAddress: the public endpoints have a
// limit of their own per client address, read through trusted proxies:
// one address over it never blocks another, and the API's clients and
// the customer pages keep their own limits.
func TestPublicEndpointsAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	// A clock that stands still: no bucket refills while the test runs,
	// however slow the machine.
	frozen := time.Now()
	e := newEnv(t, func(o *apiserver.Options) {
		o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
		o.Now = func() time.Time { return frozen }
	})
	path := "/public/accounts/" + e.account + "/reviews"
	var last response
	for range 300 {
		if last = e.anon(t, path, header{"X-Forwarded-For", "203.0.113.9"}); last.status == http.StatusTooManyRequests {
			break
		}
	}
	requireProblem(t, last, http.StatusTooManyRequests)
	assert.NotEmpty(t, last.header.Get("Retry-After"))
	assert.Equal(t, "*", last.header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, http.StatusOK, e.anon(t, path, header{"X-Forwarded-For", "203.0.113.10"}).status, "another address")
	assert.Equal(t, http.StatusOK, e.get(t, "/reviews").status, "the API's clients have their own limit")
	limitedWidget := e.anon(t, "/public/accounts/"+e.account+"/widget", header{"X-Forwarded-For", "203.0.113.9"})
	assert.Equal(t, http.StatusTooManyRequests, limitedWidget.status, "one limit for every public endpoint")
	assert.Equal(t, "text/html; charset=utf-8", limitedWidget.header.Get("Content-Type"), "a page's 429 is a page")
}

// TestPublicReviewsByLanguage: a language keeps its reviews of every
// region, a locale with a region only its own.
func TestPublicReviewsByLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, loc := range []string{"en", "en_GB", "de", "de_AT", "fr_CA"} {
		e.reviewed(t, reviewdb.ReviewInput{Rating: 5, Locale: loc})
	}
	path := "/public/accounts/" + e.account + "/reviews?locale="
	for locale, want := range map[string][]string{
		"en": {"en", "en_GB"}, "en_GB": {"en_GB"}, "en-GB": {"en_GB"}, "en_US": nil,
		"de": {"de", "de_AT"}, "de_AT": {"de_AT"}, "fr": {"fr_CA"}, "es": nil,
	} {
		items, _ := publicItems(t, e.anon(t, path+locale))
		var got []string
		for _, it := range items {
			got = append(got, it["locale"].(string))
		}
		assert.ElementsMatch(t, want, got, locale)
	}
}

// TestPublicFeedOutlivesTheWriteTimeout: a feed streams for as long as it
// keeps writing, past the server's WriteTimeout (which bounds a whole
// answer, and which a feed of a million reviews outlasts): each write
// has its own deadline.
func TestPublicFeedOutlivesTheWriteTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seedPublicReviews(t, e.store.DB(), e.account, e.channel, 300, 0)
	var public int
	require.NoError(t, e.store.DB().Get(&public, `SELECT count(*) FROM product_reviews WHERE account_id = $1 AND public`, e.account))
	srv := httptest.NewUnstartedServer(e.api)
	srv.Config.WriteTimeout = time.Millisecond // over before the first byte
	srv.Start()
	t.Cleanup(srv.Close)
	res, err := srv.Client().Get(srv.URL + "/public/accounts/" + e.account + "/feeds/google-product-reviews.xml")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err, "the whole feed, not cut at the server's write timeout")
	assert.Equal(t, public, strings.Count(string(body), "</review>"), "every public product review")
	assert.True(t, strings.HasSuffix(string(body), "</feed>\n"))
}

// On an https base URL the public reviews keep browsers on https, as the
// customer pages do; on http they say nothing of it.
func TestPublicEndpointsSendHSTSOnHTTPS(t *testing.T) {
	t.Parallel()
	https := newEnv(t, func(o *apiserver.Options) { o.HSTS = true })
	plain := newEnv(t)
	for _, e := range []*env{https, plain} {
		for _, path := range []string{
			"/public/accounts/" + e.account + "/reviews",
			"/public/accounts/" + e.account + "/widget",
			"/public/accounts/acc-00000000-0000-4000-8000-000000000000/reviews", // errors too
		} {
			got := e.anon(t, path).header.Values("Strict-Transport-Security")
			if e == https {
				assert.Equal(t, []string{"max-age=31536000"}, got, path)
			} else {
				assert.Empty(t, got, path)
			}
		}
	}
}

// TestPublicProductJSONLDNeedsAReview: the JSON-LD of a product nobody
// reviewed in public is a 404, not an empty Product named after the
// query: a product of the event left unrated, one whose only review is
// hidden, one never sold.
func TestPublicProductJSONLDNeedsAReview(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.reviewed(t, reviewdb.ReviewInput{Rating: 5, Products: []reviewdb.ProductRating{{Index: 0, Rating: 4}}})
	hidden, _ := e.reviewed(t, reviewdb.ReviewInput{Rating: 2, Products: []reviewdb.ProductRating{{Index: 1, Rating: 1}}})
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPost, "/reviews/"+hidden+"/report", e.token, `{"reason":"personal_data"}`).status)

	ok := e.anon(t, "/public/products/reviews.jsonld?account="+e.account+"&sku=JKT-1")
	requirePublic(t, ok, "application/ld+json")
	for _, q := range []string{"sku=BOOT-2", "mpn=B2", "sku=NEVER-SOLD-42", "gtin=96385074"} {
		r := e.anon(t, "/public/products/reviews.jsonld?account="+e.account+"&"+q)
		requireProblem(t, r, http.StatusNotFound)
		assert.NotContains(t, string(r.body), "NEVER-SOLD-42", "the query is not repeated back")
		assert.Equal(t, "*", r.header.Get("Access-Control-Allow-Origin"))
	}
	list := e.anon(t, "/public/products/reviews?account="+e.account+"&sku=NEVER-SOLD-42")
	requirePublic(t, list, "application/json")
	assert.Empty(t, list.object(t)["items"], "the JSON list of such a product is an empty list, as any page past the last")
}

// TestPublicOutputsNameAGTINOnlyWhenItChecks: a product whose GTIN fails
// its check digit has no gtin in the public JSON, the JSON-LD or the
// feed, and still finds its reviews by that GTIN; the shop's own API
// keeps the GTIN as the event gave it.
func TestPublicOutputsNameAGTINOnlyWhenItChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	ev := e.minimalEvent("checkout")
	ev["products"] = []any{map[string]any{"name": "Mug", "sku": "MUG-1", "gtin": "4006381333932"}}
	eventID := e.acceptEvent(t, ev)
	rev, _, err := e.store.Reviews.SaveReview(t.Context(), reviewdb.ReviewInput{EventID: eventID, Locale: "en", Rating: 4,
		Products: []reviewdb.ProductRating{{Index: 0, Rating: 5, Comment: "Keeps warm"}}})
	require.NoError(t, err)

	items, _ := publicItems(t, e.anon(t, "/public/accounts/"+e.account+"/reviews"))
	require.Len(t, items, 1)
	assert.Equal(t, "", items[0]["products"].([]any)[0].(map[string]any)["gtin"], "the list")
	byGTIN, _ := publicItems(t, e.anon(t, "/public/products/reviews?account="+e.account+"&gtin=4006381333932"))
	require.Len(t, byGTIN, 1, "the product's reviews are still found by the GTIN the event gave")
	assert.Equal(t, "", byGTIN[0]["product"].(map[string]any)["gtin"], "the product list")
	for _, q := range []string{"sku=MUG-1", "gtin=4006381333932"} {
		ld := e.anon(t, "/public/products/reviews.jsonld?account="+e.account+"&"+q)
		requirePublic(t, ld, "application/ld+json")
		assert.NotContains(t, ld.object(t), "gtin", q)
	}
	feed := e.anon(t, "/public/accounts/"+e.account+"/feeds/google-product-reviews.xml")
	requirePublic(t, feed, "application/xml; charset=utf-8")
	assert.NotContains(t, string(feed.body), "4006381333932")
	assert.NotContains(t, string(feed.body), "<gtins")

	own := e.get(t, "/reviews/"+rev.ID).object(t)
	assert.Equal(t, "4006381333932", own["products"].([]any)[0].(map[string]any)["product"].(map[string]any)["gtin"],
		"the shop's own data, as it gave it")
}
