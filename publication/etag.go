package publication

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

// Caches (browsers, CDNs, feed readers) keep a public answer by its
// strong ETag, so every ETag must change when the answer's bytes do —
// also when only the code that renders them changed.
//
// An answer rendered whole before it is sent (the JSON lists, the
// JSON-LD, the widget, the verify page, the keys) takes the SHA-256 of
// its bytes (ETag): a new renderer that changes the bytes changes the
// ETag with them, by construction.
//
// The feed is streamed, so its ETag (FeedETag) is chosen before its first
// byte: from the account's publication version (what it shows) and the
// feed renderer's version, which is not a constant to remember to bump
// but the SHA-256 of the feed this very code writes of a fixed sample
// (feedSample: every kind of product, reviewer and text the feed
// handles, in every language of the public author). A change of the code
// that changes the feed's bytes for any of them changes the version.
// TestFeedETagFollowsItsBytes keeps a golden feed of other data, and
// fails when its bytes change while the ETag does not.

// ETag is the strong ETag of bytes: their SHA-256, base64url, quoted.
func ETag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:]) + `"`
}

// FeedETag is the strong ETag of an account's feed at its publication
// version v, linking to the public pages on base.
func FeedETag(base, accountID string, v int64) string {
	return ETag([]byte("google-product-reviews\x00" + FeedRenderer() + "\x00" + base + "\x00" + accountID + "\x00" +
		strconv.FormatInt(v, 10)))
}

// FeedRenderer is the feed renderer's version: the hex SHA-256 of the
// feeds this code writes of feedSample, made once.
var FeedRenderer = sync.OnceValue(func() string {
	h := sha256.New()
	items := feedSample()
	for _, acc := range []accountdb.Account{
		{ID: "acc-sample", Name: "Sample shop", DisplayName: "Shop <&> \"Ltd\"", LogoURL: "https://shop.example/logo.png?a=1&b=<2>"},
		{ID: "acc-sample", Name: "Sample shop", LogoURL: "https://localhost/logo.png"},
	} {
		for _, its := range [][]reviewdb.FeedItem{items, nil} {
			var b bytes.Buffer
			err := Feed{Account: acc, ReviewURL: func(id string) string { return "https://reviews.shop.example/r/" + id + "?a=1&b=2" }}.Write(&b,
				func(fn func(reviewdb.FeedItem) error) error {
					for _, it := range its {
						if err := fn(it); err != nil {
							return err
						}
					}
					return nil
				})
			if err != nil {
				panic(fmt.Sprintf("feed of the sample: %v", err)) // a buffer never fails
			}
			h.Write(b.Bytes())
		}
	}
	return hex.EncodeToString(h.Sum(nil))
})

// feedSample is what the feed renderer's version is made of: a review in
// every language of the public author, named and anonymous, with a
// product of every shape the feed treats apart — every identifier, none,
// a GTIN of each length, one that fails its check digit, identifiers of
// white space, no address or one the schema refuses, text the encoder
// escapes or replaces — and one without a comment, which the feed leaves
// out. Extend it when the feed learns to treat something apart.
func feedSample() []reviewdb.FeedItem {
	at := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	products := []reviewdb.Product{
		{Name: "Jacket", SKU: "JKT-1", GTIN: "4006381333931", MPN: "M-1", Brand: "Acme", URL: "https://shop.example/jkt", ImageURL: "https://shop.example/jkt.png"},
		{},
		{Name: "Pen", GTIN: "96385074"},
		{Name: "Cup", GTIN: "036000291452"},
		{Name: "Crate", GTIN: "10614141000415"},
		{Name: "Mug", SKU: "MUG-1", GTIN: "4006381333932"},
		{Name: " \t", SKU: " ", GTIN: "ABCDEFGH", MPN: "\n", Brand: "  "},
		{Name: "Local", MPN: "L-1", URL: "https://localhost/p"},
		{Name: "</script> ]]> & <b>x</b> \"q\" 'a' \u2028\u202e\x07\U0001F600", SKU: "S<1>", MPN: "M&1", Brand: "Acme ]]>",
			URL: "https://shop.example/p?a=1&b=2"},
	}
	var out []reviewdb.FeedItem
	for i, loc := range review.Locales() {
		for j, p := range products {
			n := i*len(products) + j
			id := strconv.Itoa(n)
			out = append(out, reviewdb.FeedItem{ProductReview: reviewdb.ProductReview{ID: "prv-" + id, ReviewID: "rev-" + id,
				EventID: "evt-" + id, Product: p, Rating: 1 + n%review.MaxRating, Comment: "Comment & <" + id + ">\nline 2",
				CreatedAt: at.Add(-time.Duration(n) * time.Second)}, Locale: loc, ShowName: n%2 == 0,
				AuthorFirstName: "Anna Maria", AuthorLastName: "Strauß"})
		}
	}
	silent := out[0]
	silent.ID, silent.Comment = "prv-silent", " \n"
	return append(out, silent)
}
