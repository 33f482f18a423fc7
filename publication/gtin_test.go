package publication_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// TestOneGTINRule: a GTIN whose check digit fails is in none of the
// public outputs — the JSON of a review and of a product review, the
// product's JSON-LD (whether asked for by that GTIN or by the SKU), the
// feed — and one that checks is in all of them.
func TestOneGTINRule(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := storeset.New(db, "P7D")
	keys := newKeys(t, st, testSecret)
	acc := hostileAccount()
	acc.ID = eventfixture.NewAccount(t, db, eventfixture.Setting{}).AccountID
	for gtin, shown := range map[string]bool{"4006381333931": true, "4006381333932": false, "12345": false} {
		r := hostileReview(acc, false)
		r.Products[0].GTIN = gtin
		pr := reviewdb.PublicProductReview{ProductReview: r.Products[0], Review: r}
		want := ""
		if shown {
			want = gtin
		}

		rv, err := keys.ReviewOf(context.Background(), r)
		require.NoError(t, err)
		assert.Equal(t, want, rv.Products[0].GTIN, "%s: the list's JSON", gtin)
		list, err := keys.ProductListOf(context.Background(), acc, review.Aggregate{}, []reviewdb.PublicProductReview{pr}, nil)
		require.NoError(t, err)
		assert.Equal(t, want, list.Items[0].Product.GTIN, "%s: the product list's JSON", gtin)

		for _, k := range []review.ProductKey{{Kind: review.GTIN, Value: gtin}, {Kind: review.SKU, Value: r.Products[0].SKU}} {
			ld, err := publication.ProductOf(k, review.Aggregate{Count: 1, Sum: 5}, []reviewdb.PublicProductReview{pr})
			require.NoError(t, err)
			raw, err := json.Marshal(ld)
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(raw, &doc))
			if shown {
				assert.Equal(t, gtin, doc["gtin"], "%s by %s: the JSON-LD", gtin, k.Kind)
			} else {
				assert.NotContains(t, doc, "gtin", "%s by %s: the JSON-LD", gtin, k.Kind)
			}
		}

		var feed bytes.Buffer
		require.NoError(t, publication.Feed{Account: acc, ReviewURL: func(id string) string { return "https://api.example/r/" + id }}.Write(&feed,
			func(fn func(reviewdb.FeedItem) error) error {
				return fn(reviewdb.FeedItem{ProductReview: pr.ProductReview, Locale: "en"})
			}))
		assert.Equal(t, shown, bytes.Contains(feed.Bytes(), []byte("<gtin>"+gtin+"</gtin>")), "%s: the feed", gtin)
		assert.Equal(t, shown, bytes.Contains(feed.Bytes(), []byte("<gtins>")), "%s: the feed", gtin)
	}
}
