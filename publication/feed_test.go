package publication_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/feedschema"
	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

// feedItem is a public product review with a comment, of product p.
func feedItem(i int, p reviewdb.Product) reviewdb.FeedItem {
	return reviewdb.FeedItem{ProductReview: reviewdb.ProductReview{ID: fmt.Sprintf("prv-%d", i), ReviewID: fmt.Sprintf("rev-%d", i),
		EventID: fmt.Sprintf("evt-%d", i), Product: p, Rating: 1 + i%5, Comment: "Comment " + fmt.Sprint(i), CreatedAt: created},
		Locale: "de", ShowName: i%2 == 0, AuthorFirstName: "Greta", AuthorLastName: "Zimmermann"}
}

// writeFeed writes the feed of items for acc, each review's address on
// api.example.
func writeFeed(t *testing.T, acc accountdb.Account, items []reviewdb.FeedItem) []byte {
	t.Helper()
	return write(t, publication.Feed{Account: acc, ReviewURL: func(id string) string { return "https://api.example/public/reviews/" + id + "/verify" }}, items)
}

// write writes feed with items.
func write(t *testing.T, feed publication.Feed, items []reviewdb.FeedItem) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, feed.Write(&b, func(fn func(reviewdb.FeedItem) error) error {
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		return nil
	}))
	return b.Bytes()
}

// TestFeedFollowsGoogleSchema: whatever the products carry — every
// identifier, none, a GTIN that fails its check digit, identifiers of
// white space, no address or one the schema refuses, hostile text —
// and however many reviews there are (none, only ones without a
// comment, more than a flush), the feed is valid against Google's
// Product Reviews Feed 2.3 (internal/feedschema: order, occurrence and
// types of every element), names only GTINs that check, and says of every
// review that it was collected after fulfilment, with the event as its
// transaction.
func TestFeedFollowsGoogleSchema(t *testing.T) {
	t.Parallel()
	products := map[string]reviewdb.Product{
		"every identifier":       {Name: "Jacket", SKU: "JKT-1", GTIN: "4006381333931", MPN: "M-1", Brand: "Acme", URL: "https://shop.example/jkt"},
		"none":                   {Name: "Plain"},
		"no name either":         {},
		"a GTIN that fails":      {Name: "Mug", GTIN: "4006381333932"},
		"a GTIN of letters":      {Name: "Mug", GTIN: "ABCDEFGH"},
		"a GTIN-8":               {Name: "Pen", GTIN: "96385074"},
		"no MPN and no brand":    {Name: "Cup", SKU: "CUP-1", GTIN: "036000291452"},
		"a brand only":           {Name: "Hat", Brand: "Acme"},
		"an MPN only":            {Name: "Bolt", MPN: "B-7"},
		"white space keys":       {Name: " \t", SKU: " ", MPN: "\n", Brand: "  "},
		"an address without dot": {Name: "Local", SKU: "L-1", URL: "https://localhost/p"},
		"hostile text":           {Name: hostile, SKU: "S<1>", MPN: "M&1", Brand: "Acme ]]>", URL: "https://shop.example/p?a=1&b=2"},
	}
	accounts := map[string]accountdb.Account{
		"with a logo":            hostileAccount(),
		"without a logo":         {ID: store.NewID("acc"), Name: "Shop"},
		"a logo the schema bars": {ID: store.NewID("acc"), Name: "Shop", LogoURL: "https://localhost/logo.png"},
	}
	var all []reviewdb.FeedItem
	for _, p := range products {
		all = append(all, feedItem(len(all), p))
	}
	silent := feedItem(999, products["every identifier"])
	silent.Comment = " \n"
	many := make([]reviewdb.FeedItem, 0, 700)
	for i := range 700 {
		many = append(many, feedItem(i, products["every identifier"]))
	}
	feeds := map[string][]reviewdb.FeedItem{
		"every kind of product":   all,
		"no reviews":              nil,
		"only a silent review":    {silent},
		"more than a flush (700)": many,
	}
	for accName, acc := range accounts {
		for feedName, items := range feeds {
			name := accName + ", " + feedName
			raw := writeFeed(t, acc, items)
			require.NoError(t, feedschema.Validate(bytes.NewReader(raw)), "%s:\n%s", name, raw)

			var doc struct {
				Reviews []struct {
					ID               string   `xml:"review_id"`
					GTINs            []string `xml:"products>product>product_ids>gtins>gtin"`
					CollectionMethod string   `xml:"collection_method"`
					TransactionID    string   `xml:"transaction_id"`
				} `xml:"reviews>review"`
			}
			require.NoError(t, xml.Unmarshal(raw, &doc), name)
			want := 0
			for _, it := range items {
				if it.Comment == silent.Comment {
					continue
				}
				want++
			}
			require.Len(t, doc.Reviews, want, name)
			for i, r := range doc.Reviews {
				for _, g := range r.GTINs {
					assert.True(t, review.ValidGTIN(g), "%s: %s", name, g)
				}
				assert.Equal(t, "post_fulfillment", r.CollectionMethod, name)
				assert.Equal(t, "evt-"+r.ID[len("prv-"):], r.TransactionID, "%s: the event's id", name)
				assert.NotEmpty(t, r.TransactionID, "%s: review %d", name, i)
			}
		}
	}
	raw := writeFeed(t, hostileAccount(), all)
	assert.NotContains(t, string(raw), "4006381333932")
	assert.NotContains(t, string(raw), "ABCDEFGH")
	assert.Contains(t, string(raw), "<gtin>96385074</gtin>")
	assert.NotContains(t, string(raw), "localhost", "an address the schema refuses gives way to the review's")
}
