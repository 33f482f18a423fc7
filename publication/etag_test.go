package publication_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

var update = flag.Bool("update", false, "record the golden feed's hash and its ETag anew")

// golden is testdata/feed.golden.json: the SHA-256 of the fixed feed's
// bytes and its ETag.
type golden struct {
	Feed string `json:"feedSha256"`
	ETag string `json:"etag"`
}

// TestFeedETagFollowsItsBytes: a fixed feed (300 reviews of products of
// every shape, two publishers) keeps its recorded ETag only while its
// bytes stay the same (testdata/feed.golden.json holds their hash).
// When a change of the code changes the bytes, the ETag must change too
// (the renderer's version is a hash of its own output over a sample, so
// this fails only when the sample misses what changed: extend
// feedSample); then record both anew:
//
//	go test ./publication -run TestFeedETagFollowsItsBytes -update
func TestFeedETagFollowsItsBytes(t *testing.T) {
	products := []reviewdb.Product{
		{Name: "Jacket", SKU: "JKT-1", GTIN: "4006381333931", MPN: "M-1", Brand: "Acme", URL: "https://shop.example/jkt"},
		{Name: "Plain"},
		{Name: "Mug", GTIN: "4006381333932", Brand: "Acme"},
		{Name: "Crate", GTIN: "10614141000415", URL: "https://localhost/crate"},
		{Name: "Pen \u00e9\u0301 & <nib>", GTIN: "96385074", SKU: "PEN \t1"},
		{Name: " ", MPN: " M ", Brand: "\u202eAcme"},
	}
	items := make([]reviewdb.FeedItem, 0, 300)
	for i := range 300 {
		it := feedItem(i, products[i%len(products)])
		it.Locale = []string{"en", "de_AT", "fr", "xx"}[i%4]
		if i%7 == 0 {
			it.Comment = ""
		}
		items = append(items, it)
	}
	var raw []byte
	for _, acc := range []accountdb.Account{
		{ID: "acc-golden", Name: "Golden shop", LogoURL: "https://shop.example/logo.png"},
		{ID: "acc-golden", Name: "Golden shop", DisplayName: "Gold & Co"},
	} {
		raw = append(raw, writeFeed(t, acc, items)...)
	}
	etag := publication.FeedETag("https://reviews.shop.example", "acc-golden", 42)

	sum := sha256.Sum256(raw)
	got := golden{Feed: hex.EncodeToString(sum[:]), ETag: etag}
	path := filepath.Join("testdata", "feed.golden.json")
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var want golden
	require.NoError(t, json.Unmarshal(b, &want))
	sameBytes, sameETag := got.Feed == want.Feed, got.ETag == want.ETag
	switch {
	case sameBytes && sameETag:
	case !sameBytes && sameETag:
		t.Fatal("the feed's bytes changed but its ETag did not, so caches would keep serving the old feed: " +
			"make feedSample (publication/etag.go) show what changed, then record the golden feed's hash anew with -update")
	default:
		assert.Fail(t, "the golden feed is out of date", "bytes changed: %v, ETag changed: %v; if the change is meant, "+
			"record them anew: go test ./publication -run TestFeedETagFollowsItsBytes -update", !sameBytes, !sameETag)
	}
}
