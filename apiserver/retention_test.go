package apiserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

// TestRetentionChangesNoPublicAnswer drops the month the reviewed events
// lived in and finds every public answer (the list with its aggregate
// and proofs, JSON-LD, widget, feed, product reviews, the verify page with
// its proof) byte for byte as before: a review keeps what they show of its
// event.
func TestRetentionChangesNoPublicAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	db := e.store.DB()
	products := []reviewdb.ProductRating{{Index: 0, Rating: 5, Comment: "warm"}}

	// A review of an invite that was sent, and one written through a link
	// before its invite went out, which went later.
	sent, sentEvent := e.reviewed(t, reviewdb.ReviewInput{Rating: 4, Comment: "good", ShowName: true, Products: products})
	_, err := db.Exec(`UPDATE events SET invite_status = 'sent', sent_at = $2 WHERE id = $1`, sentEvent, time.Now())
	require.NoError(t, err)
	_, early := e.reviewed(t, reviewdb.ReviewInput{Rating: 2, Comment: "early", Locale: "de"})
	_, err = db.Exec(`UPDATE events SET invite_status = 'sent', sent_at = $2 WHERE id = $1`, early, time.Now())
	require.NoError(t, err)

	public := []string{
		"/public/accounts/" + e.account + "/reviews",
		"/public/accounts/" + e.account + "/reviews.jsonld",
		"/public/accounts/" + e.account + "/widget",
		"/public/accounts/" + e.account + "/feeds/google-product-reviews.xml",
		"/public/products/reviews?account=" + e.account + "&gtin=4006381333931",
		"/public/products/reviews.jsonld?account=" + e.account + "&gtin=4006381333931",
	}
	items, _ := publicItems(t, e.anon(t, public[0]))
	require.Len(t, items, 2)
	for _, it := range items {
		public = append(public, "/public/reviews/"+it["id"].(string)+"/verify?locale=en&proof="+url.QueryEscape(it["proof"].(string)))
	}
	assert.Equal(t, "Greta Z.", items[1]["author"])
	claims := proofClaims(t, items[0]["proof"].(string))
	assert.NotNil(t, claims["invitedAt"], "the invite sent after the review is stated")
	assert.NotNil(t, claims["eventDate"])
	before := map[string]response{}
	for _, path := range public {
		r := e.anon(t, path)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", path, r.body)
		before[path] = r
	}

	// 400 days after the month: retention drops it.
	now := time.Now()
	e.store.SetClock(func() time.Time { return now.AddDate(1, 3, 0) })
	round, _, err := e.store.Partitions.Maintain(ctx, store.PartitionOptions(400*24*time.Hour))
	require.NoError(t, err)
	month := now.UTC().Format("2006_01")
	require.Contains(t, round.Dropped, "events_"+month)
	e.store.SetClock(time.Now)
	assert.Equal(t, http.StatusNotFound, e.get(t, "/events/"+sentEvent).status, "the event is gone")

	for _, path := range public {
		r := e.anon(t, path)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", path, r.body)
		assert.Equal(t, string(before[path].body), string(r.body), path)
		assert.Equal(t, before[path].header.Get("ETag"), r.header.Get("ETag"), path)
	}
	assert.Equal(t, sent, items[1]["id"])
}

// proofClaims are the claims of a compact JWS, unverified.
func proofClaims(t *testing.T, proof string) map[string]any {
	t.Helper()
	parts := strings.Split(proof, ".")
	require.Len(t, parts, 3)
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	var claims map[string]any
	require.NoError(t, json.Unmarshal(raw, &claims))
	return claims
}
