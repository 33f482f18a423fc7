package publication_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/text"
)

// hostileRaw is what a customer might type; hostile is how it is stored
// (text.Clean: the bidirectional override and the control
// character gone, everything else kept). Every output must give hostile
// back intact when parsed by its own format's parser.
const hostileRaw = "</script><script>alert(1)</script> ]]> & &amp; <b>bold</b> \"q\" 'a' <!-- c --> {{.}} \u2028x\u2029 \u202eevil\u202c\x07\tend\nline2"

var hostile = text.Clean(text.Multiline, hostileRaw)

func TestHostileTextIsCleanedOnce(t *testing.T) {
	t.Parallel()
	assert.NotContains(t, hostile, "\u202e")
	assert.NotContains(t, hostile, "\x07")
	assert.Contains(t, hostile, "</script>")
	assert.Contains(t, hostile, "]]>")
}

var (
	created  = time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	replied  = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	txDate   = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	shopName = "Shop <&> \"Ltd\""
)

func hostileAccount() accountdb.Account {
	return accountdb.Account{ID: store.NewID("acc"), Name: "ignored", DisplayName: shopName, LogoURL: "https://shop.example/logo.png?a=1&b=<2>"}
}

func hostileReview(acc accountdb.Account, showName bool) reviewdb.PublicReview {
	r := reviewdb.PublicReview{Review: reviewdb.Review{ID: store.NewID("rev"), AccountID: acc.ID, EventID: store.NewID("evt"), Rating: 4,
		Comment: hostile, Locale: "de", Status: review.Published, Public: true, ShowName: showName,
		AuthorFirstName: "Greta", AuthorLastName: "Zimmermann", ReplyText: hostile, ReplyCreatedAt: &replied,
		CreatedAt: created, UpdatedAt: created}, TransactionDate: &txDate}
	r.Products = []reviewdb.ProductReview{{ID: store.NewID("prv"), ReviewID: r.ID, Product: reviewdb.Product{Name: "Jacket " + hostile,
		SKU: "JKT-1 ]]>", GTIN: "4006381333931", Brand: "Acme & Co"}, Rating: 5, Comment: hostile}}
	return r
}

// TestFeedXMLEscaping: the feed parses with an XML parser, and every text
// and attribute comes back as stored; the structure is Google's 2.3.
func TestFeedXMLEscaping(t *testing.T) {
	t.Parallel()
	acc := hostileAccount()
	items := []reviewdb.FeedItem{
		{ProductReview: reviewdb.ProductReview{ID: "prv-1", ReviewID: "rev-1", Product: reviewdb.Product{Name: hostile, SKU: "S<1>",
			GTIN: "4006381333931", MPN: "M&1", Brand: "Acme ]]>", URL: "https://shop.example/p?a=1&b=2"}, Rating: 5, Comment: hostile,
			CreatedAt: created}, Locale: "fr", ShowName: true, AuthorFirstName: "Greta", AuthorLastName: "Zimmermann"},
		{ProductReview: reviewdb.ProductReview{ID: "prv-2", ReviewID: "rev-2", Product: reviewdb.Product{Name: "Plain", GTIN: "4006381333932"}, Rating: 1,
			Comment: "Broke in a week.", CreatedAt: created}, Locale: "de", ShowName: false, AuthorFirstName: "Hans", AuthorLastName: "Meier"},
		// Rated without a comment: the feed's content is required and
		// never empty, so these are left out.
		{ProductReview: reviewdb.ProductReview{ID: "prv-3", ReviewID: "rev-3", Product: reviewdb.Product{Name: "Mute"}, Rating: 4,
			CreatedAt: created}, Locale: "en"},
		{ProductReview: reviewdb.ProductReview{ID: "prv-4", ReviewID: "rev-4", Product: reviewdb.Product{Name: "Blank"}, Rating: 2,
			Comment: " \n\t", CreatedAt: created}, Locale: "en"},
	}
	raw := write(t, publication.Feed{Account: acc, ReviewURL: func(id string) string { return "https://api.example/public/reviews/" + id + "/verify?x=1&y=2" }}, items)
	b := bytes.NewBuffer(raw)
	assert.True(t, strings.HasPrefix(b.String(), xml.Header))
	assert.NotContains(t, b.String(), "]]>", "no text can end a CDATA section or anything else")
	assert.NotContains(t, b.String(), "</script>")

	var doc struct {
		XMLName   xml.Name `xml:"feed"`
		Version   string   `xml:"version"`
		Publisher struct {
			Name    string `xml:"name"`
			Favicon string `xml:"favicon"`
		} `xml:"publisher"`
		Reviews []struct {
			ID       string `xml:"review_id"`
			Reviewer struct {
				Name struct {
					Anonymous string `xml:"is_anonymous,attr"`
					Text      string `xml:",chardata"`
				} `xml:"name"`
			} `xml:"reviewer"`
			Timestamp string `xml:"review_timestamp"`
			Content   string `xml:"content"`
			URL       struct {
				Type string `xml:"type,attr"`
				URL  string `xml:",chardata"`
			} `xml:"review_url"`
			Overall struct {
				Min   string `xml:"min,attr"`
				Max   string `xml:"max,attr"`
				Value int    `xml:",chardata"`
			} `xml:"ratings>overall"`
			Products []struct {
				GTINs  []string `xml:"product_ids>gtins>gtin"`
				MPNs   []string `xml:"product_ids>mpns>mpn"`
				SKUs   []string `xml:"product_ids>skus>sku"`
				Brands []string `xml:"product_ids>brands>brand"`
				Name   string   `xml:"product_name"`
				URL    string   `xml:"product_url"`
			} `xml:"products>product"`
			IsSpam string `xml:"is_spam"`
		} `xml:"reviews>review"`
	}
	require.NoError(t, xml.Unmarshal(b.Bytes(), &doc), "%s", b.String())
	assert.Equal(t, "2.3", doc.Version)
	assert.Equal(t, shopName, doc.Publisher.Name)
	assert.Equal(t, acc.LogoURL, doc.Publisher.Favicon)
	require.Len(t, doc.Reviews, 2)
	first := doc.Reviews[0]
	assert.Equal(t, "prv-1", first.ID)
	assert.Equal(t, "Greta Z.", first.Reviewer.Name.Text)
	assert.Empty(t, first.Reviewer.Name.Anonymous, "the customer agreed to be named")
	assert.Equal(t, "2026-11-22T09:30:00Z", first.Timestamp)
	assert.Equal(t, hostile, first.Content, "escaped and intact")
	assert.Equal(t, "singleton", first.URL.Type)
	assert.Equal(t, "https://api.example/public/reviews/rev-1/verify?x=1&y=2", first.URL.URL)
	assert.Equal(t, 5, first.Overall.Value)
	assert.Equal(t, "1", first.Overall.Min)
	assert.Equal(t, "5", first.Overall.Max)
	require.Len(t, first.Products, 1)
	assert.Equal(t, []string{"4006381333931"}, first.Products[0].GTINs)
	assert.Equal(t, []string{"M&1"}, first.Products[0].MPNs)
	assert.Equal(t, []string{"S<1>"}, first.Products[0].SKUs)
	assert.Equal(t, []string{"Acme ]]>"}, first.Products[0].Brands)
	assert.Equal(t, hostile, first.Products[0].Name)
	assert.Equal(t, "https://shop.example/p?a=1&b=2", first.Products[0].URL)
	assert.Equal(t, "false", first.IsSpam)

	second := doc.Reviews[1]
	assert.Equal(t, "prv-2", second.ID)
	assert.Equal(t, "Broke in a week.", second.Content)
	require.Len(t, second.Products, 1)
	assert.Equal(t, second.URL.URL, second.Products[0].URL, "product_url is required: the review's own address when the event gave none")
	assert.Equal(t, "true", second.Reviewer.Name.Anonymous)
	assert.Equal(t, "Verifizierter Kunde", second.Reviewer.Name.Text, "in the review's language")
	assert.NotContains(t, b.String(), "Meier")
	assert.NotContains(t, b.String(), "Zimmermann")
	assert.Equal(t, 1, strings.Count(b.String(), "<product_ids>"),
		"only keys that are known: the second product has none but a GTIN that does not check")

	for _, left := range []string{"prv-3", "Mute", "prv-4", "Blank"} {
		assert.NotContains(t, b.String(), left, "a product rated without a comment is not in the feed")
	}
	assert.NotContains(t, b.String(), "<content></content>")
	assert.Equal(t, 2, strings.Count(b.String(), "<content>"))
	assert.Equal(t, 2, strings.Count(b.String(), "<product_url>"), "every product has one")

	// The attributes of the overall rating, from the raw document.
	assert.Contains(t, b.String(), `<overall min="1" max="5">5</overall>`)
	assert.Contains(t, b.String(), `<version>2.3</version>`)
}

// TestFeedStopsAtAReaderError: an error of the reader side stops the
// stream and is returned.
func TestFeedStopsAtAReaderError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	err := publication.Feed{Account: hostileAccount(), ReviewURL: func(string) string { return "" }}.Write(io.Discard,
		func(fn func(reviewdb.FeedItem) error) error { return boom })
	assert.ErrorIs(t, err, boom)
}

// TestJSONLDEscaping: the JSON-LD parses back to the stored text, and
// carries no "<", ">" or "&" as such, so it can be pasted into a
// <script type="application/ld+json"> element.
func TestJSONLDEscaping(t *testing.T) {
	t.Parallel()
	acc := hostileAccount()
	agg := review.Aggregate{Count: 3, Sum: 13, Distribution: [5]int64{0, 0, 0, 2, 1}}
	noRating := hostileReview(acc, false)
	noRating.Rating = 0
	rs := []reviewdb.PublicReview{hostileReview(acc, true), noRating, hostileReview(acc, false)}
	raw, err := publication.MarshalJSONLD(publication.OrganizationOf(acc, agg, rs))
	require.NoError(t, err)
	for _, c := range []string{"<", ">", "&"} {
		assert.NotContains(t, string(raw), c)
	}
	var org map[string]any
	require.NoError(t, json.Unmarshal(raw, &org))
	assert.Equal(t, "https://schema.org", org["@context"])
	assert.Equal(t, "Organization", org["@type"])
	assert.Equal(t, shopName, org["name"])
	assert.Equal(t, acc.LogoURL, org["logo"])
	assert.Equal(t, map[string]any{"@type": "AggregateRating", "ratingValue": 4.3, "reviewCount": 3.0, "bestRating": 5.0,
		"worstRating": 1.0}, org["aggregateRating"])
	reviews := org["review"].([]any)
	require.Len(t, reviews, 2, "a review without a shop rating is no Review of the shop")
	first := reviews[0].(map[string]any)
	assert.Equal(t, map[string]any{"@type": "Review", "reviewRating": map[string]any{"@type": "Rating", "ratingValue": 4.0,
		"bestRating": 5.0, "worstRating": 1.0}, "author": map[string]any{"@type": "Person", "name": "Greta Z."},
		"datePublished": "2026-11-22", "reviewBody": hostile}, first)
	assert.Equal(t, "Verifizierter Kunde", reviews[1].(map[string]any)["author"].(map[string]any)["name"])
	assert.NotContains(t, string(raw), "Zimmermann")

	// Nothing rated yet: no aggregateRating (a count of 0 is refused by
	// search engines), an empty list of reviews.
	raw, err = publication.MarshalJSONLD(publication.OrganizationOf(acc, review.Aggregate{}, nil))
	require.NoError(t, err)
	org = nil
	require.NoError(t, json.Unmarshal(raw, &org))
	assert.NotContains(t, org, "aggregateRating")
	assert.Equal(t, []any{}, org["review"])

	// A product.
	r := hostileReview(acc, true)
	ps := []reviewdb.PublicProductReview{{ProductReview: r.Products[0], Review: r}}
	ld, err := publication.ProductOf(review.ProductKey{Kind: review.GTIN, Value: "4006381333931"},
		review.Aggregate{Count: 1, Sum: 5, Distribution: [5]int64{0, 0, 0, 0, 1}}, ps)
	require.NoError(t, err)
	raw, err = publication.MarshalJSONLD(ld)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "<")
	var prod map[string]any
	require.NoError(t, json.Unmarshal(raw, &prod))
	assert.Equal(t, "Product", prod["@type"])
	assert.Equal(t, "Jacket "+hostile, prod["name"])
	assert.Equal(t, "4006381333931", prod["gtin"])
	assert.Equal(t, "JKT-1 ]]>", prod["sku"])
	assert.Equal(t, map[string]any{"@type": "Brand", "name": "Acme & Co"}, prod["brand"])
	assert.Equal(t, 5.0, prod["aggregateRating"].(map[string]any)["ratingValue"])
	assert.Equal(t, hostile, prod["review"].([]any)[0].(map[string]any)["reviewBody"])

	// A product nobody reviewed in public is no Product at all.
	_, err = publication.ProductOf(review.ProductKey{Kind: review.SKU, Value: "NOBODY"}, review.Aggregate{}, nil)
	assert.ErrorIs(t, err, publication.ErrNotReviewed)
}

// parseHTML parses a page and fails on anything but a document.
func parseHTML(t *testing.T, b []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	require.NoError(t, err)
	return doc
}

// elements are the elements named tag, in document order.
func elements(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
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

func withClass(n *html.Node, tag, class string) []*html.Node {
	var out []*html.Node
	for _, e := range elements(n, tag) {
		if strings.Contains(" "+attrOf(e, "class")+" ", " "+class+" ") {
			out = append(out, e)
		}
	}
	return out
}

// TestWidgetHTMLEscaping: the widget is a document without script, the
// comments, replies, product names and shop name come back from the
// parsed HTML as stored, in every language and both themes.
func TestWidgetHTMLEscaping(t *testing.T) {
	t.Parallel()
	acc := hostileAccount()
	rs := []reviewdb.PublicReview{hostileReview(acc, true), hostileReview(acc, false)}
	agg := review.Aggregate{Count: 4, Sum: 17, Distribution: [5]int64{0, 0, 0, 3, 1}}
	for _, lang := range publication.Locales() {
		for _, theme := range []string{"", publication.ThemeLight, publication.ThemeDark} {
			b, err := publication.Widget{Locale: lang, Theme: theme, Account: acc, Aggregate: agg, Reviews: rs,
				VerifyURL: func(id string) string { return "https://api.example/public/reviews/" + id + "/verify" },
				AllURL:    "https://api.example/public/accounts/x/widget?view=all&locale=de"}.Render()
			require.NoError(t, err)
			doc := parseHTML(t, b)
			assert.Empty(t, elements(doc, "script"), "no script, whatever the comment says")
			root := elements(doc, "html")[0]
			assert.Equal(t, lang, attrOf(root, "lang"))
			want := "light"
			if theme == publication.ThemeDark {
				want = "dark"
			}
			assert.Equal(t, want, attrOf(root, "class"))
			assert.Contains(t, textOf(elements(doc, "h1")[0]), shopName)
			comments := withClass(doc, "p", "comment")
			require.Len(t, comments, 2)
			for _, c := range comments {
				assert.Equal(t, hostile, textOf(c), "escaped and intact")
			}
			replies := withClass(doc, "div", "reply")
			require.Len(t, replies, 2)
			assert.Equal(t, hostile, textOf(elements(replies[0], "p")[1]))
			items := elements(withClass(doc, "ul", "products")[0], "li")
			assert.Contains(t, textOf(items[0]), "Jacket "+hostile)
			// The average as stars with a text equivalent.
			summary := withClass(doc, "div", "summary")[0]
			hidden := withClass(summary, "span", "visually-hidden")
			require.Len(t, hidden, 1)
			decimal := map[string]string{"en": "4.3"}[lang]
			if decimal == "" {
				decimal = "4,3"
			}
			assert.Contains(t, textOf(hidden[0]), decimal, lang)
			assert.Equal(t, "true", attrOf(withClass(summary, "span", "stars")[0], "aria-hidden"))
			links := elements(doc, "a")
			assert.Equal(t, "https://api.example/public/accounts/x/widget?view=all&locale=de", attrOf(links[len(links)-1], "href"))
			assert.NotContains(t, string(b), "Zimmermann")
		}
	}
	// The average rounds to whole stars for the eye: 4.3 → four.
	b, err := publication.Widget{Locale: "en", Account: acc, Aggregate: agg, VerifyURL: func(string) string { return "" }}.Render()
	require.NoError(t, err)
	summary := withClass(parseHTML(t, b), "div", "summary")[0]
	assert.Equal(t, "★★★★☆", textOf(withClass(summary, "span", "stars")[0]))
	assert.Equal(t, "Rated 4.3 out of 5", textOf(withClass(summary, "span", "visually-hidden")[0]))
	assert.Equal(t, "4 reviews", textOf(withClass(summary, "span", "count")[0]))

	b, err = publication.Widget{Locale: "fr", Account: acc, VerifyURL: func(string) string { return "" }}.Render()
	require.NoError(t, err)
	assert.Equal(t, "Pas encore d’avis.", textOf(withClass(parseHTML(t, b), "p", "muted")[0]))
}

// TestVerifyPageHTML: the verify page says, in the reader's language,
// on which day the transaction was, since when the review is unchanged
// and which texts its proof covers (every word of the customer's, not
// the shop's reply), and what a proof brought to it is worth — an older
// one saying what it does not cover; hostile text stays text.
func TestVerifyPageHTML(t *testing.T) {
	t.Parallel()
	acc := hostileAccount()
	r := hostileReview(acc, false)
	invited := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	r.InvitedAt = &invited
	want := map[string]string{
		"en": "after an invite for a real transaction on 2026-11-20",
		"de": "nach einer Einladung zu einem echten Kauf am 2026-11-20",
		"da": "efter en invitation til et rigtigt køb den 2026-11-20",
		"fr": "après une invitation liée à un achat réel du 2026-11-20",
		"es": "tras una invitación por una compra real del 2026-11-20",
		"nl": "na een uitnodiging voor een echte aankoop op 2026-11-20",
	}
	require.ElementsMatch(t, publication.Locales(), []string{"da", "de", "en", "es", "fr", "nl"})
	for lang, phrase := range want {
		for _, brought := range []publication.ProofCheck{publication.ProofNone, publication.ProofMatches, publication.ProofMatchesOlder,
			publication.ProofOutdated, publication.ProofInvalid} {
			b, err := publication.VerifyPage{Locale: lang, Account: acc, Review: r, Proof: "a.b.c", KID: "kid-1",
				JWKSURL: "https://api.example/public/accounts/x/jwks.json", VerifyURL: "https://api.example/v", Brought: brought}.Render()
			require.NoError(t, err)
			doc := parseHTML(t, b)
			assert.Empty(t, elements(doc, "script"))
			assert.Equal(t, lang, attrOf(elements(doc, "html")[0], "lang"))
			body := textOf(elements(doc, "main")[0])
			assert.Contains(t, body, phrase, lang)
			assert.Contains(t, body, "2026-11-22", "unchanged since")
			assert.Contains(t, body, "2026-11-21", "the invite")
			assert.Contains(t, body, shopName)
			assert.Equal(t, hostile, textOf(withClass(doc, "p", "comment")[0]))
			assert.Equal(t, "a.b.c", textOf(withClass(doc, "p", "proof")[0]))
		}
	}
	covers := func(r reviewdb.PublicReview, brought publication.ProofCheck) string {
		b, err := publication.VerifyPage{Locale: "en", Account: acc, Review: r, Brought: brought}.Render()
		require.NoError(t, err)
		return textOf(elements(parseHTML(t, b), "main")[0])
	}
	withProducts := covers(r, publication.ProofNone)
	assert.Contains(t, withProducts, "covers the ratings, the review’s comment and the comment on each product")
	assert.Contains(t, withProducts, "The shop’s reply is the shop’s own text and is not covered")
	noProducts := r
	noProducts.Products = nil
	assert.Contains(t, covers(noProducts, publication.ProofNone), "covers the rating and the review’s comment.")
	assert.Contains(t, covers(r, publication.ProofMatchesOlder), "issued before proofs covered the comments on products")
	assert.NotContains(t, covers(r, publication.ProofMatches), "issued before proofs covered")

	for brought, class := range map[publication.ProofCheck]string{publication.ProofMatches: "ok", publication.ProofMatchesOlder: "ok",
		publication.ProofOutdated: "bad", publication.ProofInvalid: "bad"} {
		b, err := publication.VerifyPage{Locale: "en", Account: acc, Review: r, Brought: brought}.Render()
		require.NoError(t, err)
		status := elements(parseHTML(t, b), "p")
		var found bool
		for _, p := range status {
			if attrOf(p, "role") == "status" {
				found = true
				assert.Equal(t, class, attrOf(p, "class"))
			}
		}
		assert.True(t, found, "the result of the reader's proof is announced")
	}
}

// TestTextsAreComplete: every language has exactly English's keys.
func TestTextsAreComplete(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "de", publication.Pick("de_AT"))
	assert.Equal(t, "en", publication.Pick("ja"))
	assert.Equal(t, "fr", publication.AcceptLanguage("ja, fr-CH;q=0.9, de;q=0.8"))
	assert.Equal(t, "de", publication.AcceptLanguage("de-DE,de;q=0.9,en;q=0.5"))
	assert.Equal(t, "en", publication.AcceptLanguage(""))
	assert.Equal(t, "en", publication.AcceptLanguage("x;q=abc, *;q=1"))
	assert.Equal(t, "nl", publication.AcceptLanguage("en;q=0.1, nl"))
	assert.NoError(t, publication.CheckTexts())
}
