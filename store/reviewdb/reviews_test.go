package reviewdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/webhook"
)

func TestReviews(t *testing.T) {
	t.Parallel()
	st, account := newStore(t)
	ctx := context.Background()
	a, b := account(eventfixture.Setting{}), account(eventfixture.Setting{})
	first, second := a.Event(t, eventfixture.Event{}), a.Event(t, eventfixture.Event{})

	r, saved, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: first, Rating: 2, Comment: "late", Locale: "de"})
	require.NoError(t, err)
	assert.Equal(t, reviewdb.SavedCreated, saved)
	assert.Equal(t, reviewdb.Review{ID: r.ID, AccountID: a.AccountID, EventID: first, EventTypeID: a.EventTypeID, ChannelID: a.ChannelID,
		Rating: 2, Comment: "late", Locale: "de", Status: review.Published, Public: true, Products: []reviewdb.ProductReview{},
		CreatedAt: r.CreatedAt, UpdatedAt: r.CreatedAt}, r)
	assert.Equal(t, "Verifizierter Kunde", r.Author("de"), "no consent to be named")

	st.SetClock(func() time.Time { return r.CreatedAt.Add(time.Minute) })
	again, saved, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: first, Rating: 4, Comment: "arrived after all", Locale: "de"})
	require.NoError(t, err)
	assert.Equal(t, reviewdb.SavedUpdated, saved, "one review per event: a second post replaces it")
	assert.Equal(t, r.ID, again.ID)
	assert.Equal(t, 4, again.Rating)
	assert.Equal(t, r.CreatedAt, again.CreatedAt)
	assert.Equal(t, r.CreatedAt.Add(time.Minute), again.UpdatedAt, "updatedAt moves")

	st.SetClock(func() time.Time { return r.CreatedAt.Add(2 * time.Minute) })
	same, saved, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: first, Rating: 4, Comment: "arrived after all", Locale: "de"})
	require.NoError(t, err)
	assert.Equal(t, reviewdb.SavedUnchanged, saved, "the same answer again changes nothing")
	assert.Equal(t, again.UpdatedAt, same.UpdatedAt)

	other, _, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: second, Rating: 5, Locale: "en"})
	require.NoError(t, err)
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: b.Event(t, eventfixture.Event{}), Rating: 1, Comment: "b's", Locale: "en"})
	require.NoError(t, err)

	list := func(f reviewdb.ReviewFilter) []string {
		t.Helper()
		rs, _, err := st.Reviews.ListReviews(ctx, a.AccountID, f, store.Page{})
		require.NoError(t, err)
		var ids []string
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	assert.Equal(t, []string{other.ID, r.ID}, list(reviewdb.ReviewFilter{}), "newest first, the account's only")
	assert.Equal(t, []string{r.ID}, list(reviewdb.ReviewFilter{Rating: 4}))
	assert.Equal(t, []string{other.ID}, list(reviewdb.ReviewFilter{MinRating: 5}))
	assert.Equal(t, []string{other.ID, r.ID}, list(reviewdb.ReviewFilter{EventTypeID: a.EventTypeID, ChannelID: a.ChannelID}))
	assert.Equal(t, []string{other.ID, r.ID}, list(reviewdb.ReviewFilter{Status: review.Published}))
	assert.Empty(t, list(reviewdb.ReviewFilter{Status: review.Reported}))
	from := r.CreatedAt.Add(time.Minute)
	assert.Equal(t, []string{other.ID}, list(reviewdb.ReviewFilter{CreatedFrom: &from}))
	assert.Equal(t, []string{r.ID}, list(reviewdb.ReviewFilter{CreatedTo: &from}))

	_, err = st.Reviews.Review(ctx, b.AccountID, r.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "another account's review")
	e, err := st.Invites.Event(ctx, a.AccountID, first)
	require.NoError(t, err)
	var summary struct {
		ID        string    `json:"id"`
		Rating    int       `json:"rating"`
		CreatedAt time.Time `json:"createdAt"`
	}
	require.NoError(t, json.Unmarshal(e.Review, &summary), "the event carries its review")
	assert.Equal(t, r.ID, summary.ID)
	assert.Equal(t, 4, summary.Rating)
	assert.True(t, r.CreatedAt.Equal(summary.CreatedAt))

	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: store.NewID("evt"), Rating: 3, Locale: "en"})
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: second, Locale: "en"})
	assert.ErrorIs(t, err, reviewdb.ErrNothingRated)
}

// products is an order of three products with different keys, and a
// fourth without any.
var products = []eventfixture.Product{
	{Name: "Rain jacket </script>", SKU: "JKT-1", GTIN: "4006381333931", Brand: "Acme", URL: "https://shop.example/jkt",
		ImageURL: "https://shop.example/jkt.jpg"},
	{Name: "Boots", SKU: "BOOT-2", MPN: "B2-MPN"},
	{Name: "Socks", GTIN: "0012345678905", MPN: "S3"},
	{Name: "Gift wrap"},
}

func TestProductReviews(t *testing.T) {
	t.Parallel()
	st, account := newStore(t)
	ctx := context.Background()
	a, b := account(eventfixture.Setting{}), account(eventfixture.Setting{})
	ev := a.Event(t, eventfixture.Event{Products: products})
	start := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ticking(st, start)

	r, saved, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ev, Locale: "en", Products: []reviewdb.ProductRating{
		{Index: 2, Rating: 3, Comment: "thin"}, {Index: 0, Rating: 5, Comment: "dry & warm"},
	}})
	require.NoError(t, err)
	assert.Equal(t, reviewdb.SavedCreated, saved)
	assert.Equal(t, 0, r.Rating, "products rated without a shop rating")
	require.Len(t, r.Products, 2)
	jacket, socks := r.Products[0], r.Products[1]
	assert.Equal(t, reviewdb.ProductReview{ID: jacket.ID, AccountID: a.AccountID, ReviewID: r.ID, EventID: ev, ProductIndex: 0,
		Product: reviewdb.Product{Name: "Rain jacket </script>", SKU: "JKT-1", GTIN: "4006381333931", Brand: "Acme",
			URL: "https://shop.example/jkt", ImageURL: "https://shop.example/jkt.jpg"},
		Rating: 5, Comment: "dry & warm", Status: review.Published, Public: true, CreatedAt: jacket.CreatedAt, UpdatedAt: jacket.CreatedAt}, jacket)
	assert.Regexp(t, `^prv-`, jacket.ID)
	assert.Equal(t, reviewdb.Product{Name: "Socks", GTIN: "0012345678905", MPN: "S3"}, socks.Product)

	got, err := st.Reviews.ProductReview(ctx, a.AccountID, jacket.ID)
	require.NoError(t, err)
	assert.Equal(t, jacket, got)
	_, err = st.Reviews.ProductReview(ctx, b.AccountID, jacket.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "another account's product review")

	summary := func(kind review.KeyKind, value string) review.Aggregate {
		t.Helper()
		agg, err := st.Reviews.ProductAggregate(ctx, a.AccountID, review.ProductKey{Kind: kind, Value: value})
		require.NoError(t, err)
		return agg
	}
	assert.Equal(t, review.Aggregate{Count: 1, Sum: 5, Distribution: [5]int64{0, 0, 0, 0, 1}}, summary(review.SKU, "JKT-1"))
	assert.Equal(t, summary(review.SKU, "JKT-1"), summary(review.GTIN, "4006381333931"), "one product review counts under each key")
	assert.Equal(t, review.Aggregate{Count: 1, Sum: 3, Distribution: [5]int64{0, 0, 1, 0, 0}}, summary(review.MPN, "S3"))
	assert.Equal(t, review.Aggregate{}, summary(review.SKU, "BOOT-2"), "not rated")
	shop, err := st.Reviews.ReviewAggregate(ctx, a.AccountID)
	require.NoError(t, err)
	assert.Equal(t, review.Aggregate{}, shop, "no shop rating given")

	// A second post replaces the product ratings: the jacket changes, the
	// socks lose theirs, the boots and the gift wrap get one.
	r2, saved, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ev, Rating: 4, Locale: "en", Products: []reviewdb.ProductRating{
		{Index: 0, Rating: 2, Comment: "leaks"}, {Index: 1, Rating: 4}, {Index: 3, Rating: 5},
	}})
	require.NoError(t, err)
	assert.Equal(t, reviewdb.SavedUpdated, saved)
	require.Len(t, r2.Products, 3)
	assert.Equal(t, []int{0, 1, 3}, []int{r2.Products[0].ProductIndex, r2.Products[1].ProductIndex, r2.Products[2].ProductIndex})
	assert.Equal(t, jacket.ID, r2.Products[0].ID, "a changed product rating keeps its id")
	assert.Equal(t, jacket.CreatedAt, r2.Products[0].CreatedAt)
	assert.True(t, r2.Products[0].UpdatedAt.After(jacket.UpdatedAt))
	_, err = st.Reviews.ProductReview(ctx, a.AccountID, socks.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "no longer rated")
	assert.Equal(t, review.Aggregate{Count: 1, Sum: 2, Distribution: [5]int64{0, 1, 0, 0, 0}}, summary(review.GTIN, "4006381333931"))
	assert.Equal(t, review.Aggregate{}, summary(review.MPN, "S3"))
	assert.Equal(t, review.Aggregate{Count: 1, Sum: 4, Distribution: [5]int64{0, 0, 0, 1, 0}}, summary(review.MPN, "B2-MPN"))
	shop, err = st.Reviews.ReviewAggregate(ctx, a.AccountID)
	require.NoError(t, err)
	assert.Equal(t, review.Aggregate{Count: 1, Sum: 4, Distribution: [5]int64{0, 0, 0, 1, 0}}, shop)

	_, saved, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ev, Rating: 4, Locale: "en", Products: []reviewdb.ProductRating{
		{Index: 3, Rating: 5}, {Index: 1, Rating: 4}, {Index: 0, Rating: 2, Comment: "leaks"},
	}})
	require.NoError(t, err)
	assert.Equal(t, reviewdb.SavedUnchanged, saved, "the same ratings in another order change nothing")

	for name, in := range map[string][]reviewdb.ProductRating{
		"beyond the event's products": {{Index: 4, Rating: 3}},
		"negative":                    {{Index: -1, Rating: 3}},
		"twice the same product":      {{Index: 1, Rating: 3}, {Index: 1, Rating: 4}},
	} {
		_, _, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ev, Rating: 4, Locale: "en", Products: in})
		assert.ErrorIs(t, err, reviewdb.ErrProductIndex, name)
	}
	many := make([]eventfixture.Product, 12)
	for i := range many {
		many[i] = eventfixture.Product{Name: fmt.Sprint("P", i), SKU: fmt.Sprint("SKU-", i)}
	}
	big := a.Event(t, eventfixture.Event{Products: many})
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: big, Locale: "en", Products: []reviewdb.ProductRating{{Index: 10, Rating: 3}}})
	assert.ErrorIs(t, err, reviewdb.ErrProductIndex, "only the first ten products are asked about")
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: big, Locale: "en", Products: []reviewdb.ProductRating{{Index: 9, Rating: 3}}})
	require.NoError(t, err)
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: b.Event(t, eventfixture.Event{Products: products}), Locale: "en",
		Products: []reviewdb.ProductRating{{Index: 0, Rating: 1}}})
	require.NoError(t, err)

	list := func(f reviewdb.ProductReviewFilter, p store.Page) ([]string, *store.Cursor) {
		t.Helper()
		ps, next, err := st.Reviews.ListProductReviews(ctx, a.AccountID, f, p)
		require.NoError(t, err)
		var ids []string
		for _, p := range ps {
			ids = append(ids, p.Name)
		}
		return ids, next
	}
	all, _ := list(reviewdb.ProductReviewFilter{}, store.Page{})
	// Newest first, the account's only; the boots and the gift wrap were
	// rated in one post, at one time (their order is by id).
	require.Len(t, all, 4)
	assert.Equal(t, "P9", all[0])
	assert.ElementsMatch(t, []string{"Gift wrap", "Boots"}, all[1:3])
	assert.Equal(t, "Rain jacket </script>", all[3])
	page1, next := list(reviewdb.ProductReviewFilter{}, store.Page{Limit: 3})
	require.NotNil(t, next)
	page2, last := list(reviewdb.ProductReviewFilter{}, store.Page{Limit: 3, After: next})
	assert.Nil(t, last)
	assert.Equal(t, all, append(page1, page2...), "keyset pages")
	for _, tt := range []struct {
		f    reviewdb.ProductReviewFilter
		want []string
	}{
		{reviewdb.ProductReviewFilter{SKU: "JKT-1"}, []string{"Rain jacket </script>"}},
		{reviewdb.ProductReviewFilter{GTIN: "4006381333931"}, []string{"Rain jacket </script>"}},
		{reviewdb.ProductReviewFilter{MPN: "B2-MPN"}, []string{"Boots"}},
		{reviewdb.ProductReviewFilter{SKU: "jkt-1"}, nil},
		{reviewdb.ProductReviewFilter{MinRating: 4}, all[1:3]},
		{reviewdb.ProductReviewFilter{Status: review.Published, MinRating: 5}, []string{"Gift wrap"}},
		{reviewdb.ProductReviewFilter{Status: review.Removed}, nil},
	} {
		got, _ := list(tt.f, store.Page{})
		assert.Equal(t, tt.want, got, "%+v", tt.f)
	}
	at := r2.Products[1].CreatedAt
	got2, _ := list(reviewdb.ProductReviewFilter{CreatedFrom: &at}, store.Page{})
	assert.Equal(t, all[:3], got2)
	got3, _ := list(reviewdb.ProductReviewFilter{CreatedTo: &at}, store.Page{})
	assert.Equal(t, []string{"Rain jacket </script>"}, got3)

	rr, err := st.Reviews.Review(ctx, a.AccountID, r.ID)
	require.NoError(t, err)
	assert.Len(t, rr.Products, 3, "GET /reviews/{id} carries its products")
	listed, _, err := st.Reviews.ListReviews(ctx, a.AccountID, reviewdb.ReviewFilter{}, store.Page{})
	require.NoError(t, err)
	require.Len(t, listed, 2)
	assert.Len(t, listed[0].Products, 1)
	assert.Len(t, listed[1].Products, 3)
}

// TestPublicIsDefinedOnce holds the SQL of the generated columns "public"
// to review.Public for every status and reason, stored or not.
func TestPublicIsDefinedOnce(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	for _, table := range []string{"reviews", "product_reviews"} {
		var expr string
		require.NoError(t, st.DB().Get(&expr, `SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
			JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
			WHERE d.adrelid = $1::regclass AND a.attname = 'public' AND a.attgenerated = 's'`, table), table)
		statuses := append(review.Statuses(), "")
		reasons := append(review.Reasons(), "")
		for _, s := range statuses {
			for _, r := range reasons {
				var got *bool
				require.NoError(t, st.DB().Get(&got, `SELECT `+expr+` FROM (SELECT $1::text AS status, NULLIF($2, '')::text AS report_reason) v`,
					string(s), string(r)))
				want := review.Public(s, r)
				assert.Equal(t, want, got != nil && *got, "%s: status %q, reason %q", table, s, r)
			}
		}
	}
}

func TestReportAndModerate(t *testing.T) {
	t.Parallel()
	st, _, account := webhookStore(t)
	ctx := context.Background()
	a, b := account(eventfixture.Setting{}), account(eventfixture.Setting{})
	hook := endpoint(t, st, a.AccountID, webhook.ReviewModerated)
	ticking(st, time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	ev := a.Event(t, eventfixture.Event{Products: products, CustomerReference: "C-9"})
	r, _, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ev, Rating: 1, Comment: "call me at 0151 2345678", Locale: "en",
		Products: []reviewdb.ProductRating{{Index: 0, Rating: 2}}})
	require.NoError(t, err)

	aggregates := func() (shop, jacket review.Aggregate) {
		t.Helper()
		shop, err := st.Reviews.ReviewAggregate(ctx, a.AccountID)
		require.NoError(t, err)
		jacket, err = st.Reviews.ProductAggregate(ctx, a.AccountID, review.ProductKey{Kind: review.SKU, Value: "JKT-1"})
		require.NoError(t, err)
		return shop, jacket
	}
	one := func(rating int) review.Aggregate {
		agg := review.Aggregate{Count: 1, Sum: int64(rating)}
		agg.Distribution[rating-1] = 1
		return agg
	}

	_, _, err = st.Reviews.ReportReview(ctx, b.AccountID, r.ID, review.Spam, "", "cli-b")
	assert.ErrorIs(t, err, store.ErrNotFound, "another account's review")

	rep, changed, err := st.Reviews.ReportReview(ctx, a.AccountID, r.ID, review.Spam, "looks fake", "cli-a")
	require.NoError(t, err)
	assert.True(t, changed)
	require.NotNil(t, rep.ReportedAt)
	firstReport := *rep.ReportedAt
	assert.Equal(t, review.Reported, rep.Status)
	assert.Equal(t, review.Spam, rep.ReportReason)
	assert.True(t, rep.Public, "a report of spam leaves it public until the operator decides")
	assert.Equal(t, review.Reported, rep.Products[0].Status, "the product reviews share the report")
	assert.True(t, rep.Products[0].Public)
	shop, jacket := aggregates()
	assert.Equal(t, one(1), shop, "still counted")
	assert.Equal(t, one(2), jacket)

	_, changed, err = st.Reviews.ReportReview(ctx, a.AccountID, r.ID, review.Offensive, "", "cli-a")
	require.NoError(t, err)
	assert.False(t, changed, "reported already")

	rep, changed, err = st.Reviews.ReportReview(ctx, a.AccountID, r.ID, review.PersonalData, "a phone number", "cli-a")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.False(t, rep.Public, "personal data hides it at once")
	assert.False(t, rep.Products[0].Public)
	assert.Equal(t, firstReport, *rep.ReportedAt, "in the queue since the first report")
	shop, jacket = aggregates()
	assert.Equal(t, review.Aggregate{}, shop, "no longer counted")
	assert.Equal(t, review.Aggregate{}, jacket)

	queue, err := st.Reviews.ReportedReviews(ctx, "", 100)
	require.NoError(t, err)
	require.Len(t, queue, 1)
	assert.Equal(t, r.ID, queue[0].ID)
	assert.Equal(t, "a phone number", queue[0].Note)
	assert.Len(t, queue[0].Products, 1)
	other, err := st.Reviews.ReportedReviews(ctx, b.AccountID, 100)
	require.NoError(t, err)
	assert.Empty(t, other)

	pub, changed, err := st.Reviews.ModerateReview(ctx, r.ID, review.Publish, "no personal data in it")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, review.Published, pub.Status)
	assert.True(t, pub.Public)
	assert.Nil(t, pub.ReportedAt)
	shop, jacket = aggregates()
	assert.Equal(t, one(1), shop, "counted again")
	assert.Equal(t, one(2), jacket)
	queue, err = st.Reviews.ReportedReviews(ctx, "", 100)
	require.NoError(t, err)
	assert.Empty(t, queue)

	_, _, err = st.Reviews.ReportReview(ctx, a.AccountID, r.ID, review.PersonalData, "", "cli-a")
	assert.ErrorIs(t, err, review.ErrSettled, "the operator has decided: reporting again cannot hide it")
	_, changed, err = st.Reviews.ModerateReview(ctx, r.ID, review.Publish, "again")
	require.NoError(t, err)
	assert.False(t, changed)

	// The customer changes it: it can be reported again.
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ev, Rating: 1, Comment: "my address is …", Locale: "en",
		Products: []reviewdb.ProductRating{{Index: 0, Rating: 2}}})
	require.NoError(t, err)
	_, changed, err = st.Reviews.ReportReview(ctx, a.AccountID, r.ID, review.PersonalData, "", "cli-a")
	require.NoError(t, err)
	assert.True(t, changed)

	removed, changed, err := st.Reviews.ModerateReview(ctx, r.ID, review.Remove, "personal data")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, review.Removed, removed.Status)
	assert.Equal(t, review.Removed, removed.Products[0].Status)
	_, _, err = st.Reviews.ReportReview(ctx, a.AccountID, r.ID, review.Spam, "", "cli-a")
	assert.ErrorIs(t, err, review.ErrRemoved)
	shop, _ = aggregates()
	assert.Equal(t, review.Aggregate{}, shop)

	// A removed review stays removed when the customer edits it.
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ev, Rating: 5, Locale: "en"})
	require.NoError(t, err)
	after, err := st.Reviews.Review(ctx, a.AccountID, r.ID)
	require.NoError(t, err)
	assert.Equal(t, review.Removed, after.Status)
	shop, _ = aggregates()
	assert.Equal(t, review.Aggregate{}, shop)

	_, _, err = st.Reviews.ModerateReview(ctx, store.NewID("rev"), review.Remove, "")
	assert.ErrorIs(t, err, store.ErrNotFound)

	hs, _, err := st.Reviews.ReviewHistory(ctx, a.AccountID, r.ID, store.Page{})
	require.NoError(t, err)
	var actions []string
	for i := len(hs) - 1; i >= 0; i-- {
		actions = append(actions, hs[i].Action+"/"+string(hs[i].Status)+"/"+hs[i].Actor)
	}
	assert.Equal(t, []string{"created/published/customer", "reported/reported/cli-a", "reported/reported/cli-a",
		"published/published/operator", "updated/published/customer", "reported/reported/cli-a",
		"removed/removed/operator", "updated/removed/customer"}, actions)
	assert.Equal(t, review.PersonalData, hs[2].Reason)
	assert.Equal(t, "personal data", hs[1].Note)
	page, next, err := st.Reviews.ReviewHistory(ctx, a.AccountID, r.ID, store.Page{Limit: 5})
	require.NoError(t, err)
	rest, last, err := st.Reviews.ReviewHistory(ctx, a.AccountID, r.ID, store.Page{Limit: 5, After: next})
	require.NoError(t, err)
	assert.Nil(t, last)
	assert.Equal(t, hs, append(page, rest...))
	_, _, err = st.Reviews.ReviewHistory(ctx, b.AccountID, r.ID, store.Page{})
	assert.ErrorIs(t, err, store.ErrNotFound)

	ds := deliveries(t, st, hook)
	require.Len(t, ds, 5, "one review.moderated per change of status")
	var body struct{ Data map[string]any }
	require.NoError(t, json.Unmarshal(ds[len(ds)-2].Payload, &body))
	assert.Equal(t, map[string]any{"reviewId": r.ID, "eventId": ev, "eventTypeId": a.EventTypeID, "channelId": a.ChannelID,
		"customerReference": "C-9", "status": "reported", "previousStatus": "reported", "public": false, "action": "reported",
		"reason": "personal_data", "note": "a phone number", "by": "cli-a"}, body.Data)
	require.NoError(t, json.Unmarshal(ds[0].Payload, &body))
	assert.Equal(t, "removed", body.Data["status"])
	assert.Equal(t, "operator", body.Data["by"])
}

func TestReplies(t *testing.T) {
	t.Parallel()
	st, _, account := webhookStore(t)
	ctx := context.Background()
	a, b := account(eventfixture.Setting{}), account(eventfixture.Setting{})
	hook := endpoint(t, st, a.AccountID, webhook.ReviewReplied, webhook.ReviewUpdated)
	ticking(st, time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	r, _, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: a.Event(t, eventfixture.Event{}), Rating: 3, Locale: "en"})
	require.NoError(t, err)

	_, _, err = st.Reviews.SetReply(ctx, b.AccountID, r.ID, "not yours", "cli-b")
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.ErrorIs(t, st.Reviews.DeleteReply(ctx, a.AccountID, r.ID, "cli-a"), reviewdb.ErrNoReply)

	replied, changed, err := st.Reviews.SetReply(ctx, a.AccountID, r.ID, "Sorry & thanks </script>", "cli-a")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, "Sorry & thanks </script>", replied.ReplyText)
	require.NotNil(t, replied.ReplyCreatedAt)
	assert.Equal(t, replied.ReplyCreatedAt, replied.ReplyUpdatedAt)
	assert.Equal(t, r.UpdatedAt, replied.UpdatedAt, "the reply is the shop's, not a change of the review")

	_, changed, err = st.Reviews.SetReply(ctx, a.AccountID, r.ID, "Sorry & thanks </script>", "cli-a")
	require.NoError(t, err)
	assert.False(t, changed, "the same reply again")
	edited, changed, err := st.Reviews.SetReply(ctx, a.AccountID, r.ID, "Sorry, and thanks", "cli-a")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, replied.ReplyCreatedAt, edited.ReplyCreatedAt)
	assert.True(t, edited.ReplyUpdatedAt.After(*replied.ReplyUpdatedAt))

	require.NoError(t, st.Reviews.DeleteReply(ctx, a.AccountID, r.ID, "cli-a"))
	gone, err := st.Reviews.Review(ctx, a.AccountID, r.ID)
	require.NoError(t, err)
	assert.Equal(t, "", gone.ReplyText)
	assert.Nil(t, gone.ReplyCreatedAt)
	assert.ErrorIs(t, st.Reviews.DeleteReply(ctx, a.AccountID, r.ID, "cli-a"), reviewdb.ErrNoReply)

	ds := deliveries(t, st, hook)
	assert.Equal(t, []string{webhook.ReviewReplied, webhook.ReviewReplied, webhook.ReviewReplied}, typesOf(ds))
	var body struct{ Data map[string]any }
	require.NoError(t, json.Unmarshal(ds[2].Payload, &body))
	assert.Equal(t, map[string]any{"text": "Sorry & thanks </script>", "createdAt": replied.ReplyCreatedAt.Format(webhook.TimeLayout),
		"updatedAt": replied.ReplyCreatedAt.Format(webhook.TimeLayout)}, body.Data["reply"])
	require.NoError(t, json.Unmarshal(ds[0].Payload, &body))
	assert.Nil(t, body.Data["reply"], "deleted")
	assert.Equal(t, "cli-a", body.Data["by"])

	hs, _, err := st.Reviews.ReviewHistory(ctx, a.AccountID, r.ID, store.Page{})
	require.NoError(t, err)
	require.Len(t, hs, 4)
	assert.Equal(t, []string{"reply_deleted", "replied", "replied", "created"}, []string{hs[0].Action, hs[1].Action, hs[2].Action, hs[3].Action})
}

func TestReviewWebhooksCarryProducts(t *testing.T) {
	t.Parallel()
	st, _, account := webhookStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	hook := endpoint(t, st, a.AccountID, webhook.ReviewCreated, webhook.ReviewUpdated)
	ticking(st, time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	ev := a.Event(t, eventfixture.Event{Products: products})
	in := reviewdb.ReviewInput{EventID: ev, Locale: "en", Products: []reviewdb.ProductRating{{Index: 2, Rating: 3, Comment: "thin"}}}
	r, _, err := st.Reviews.SaveReview(ctx, in)
	require.NoError(t, err)
	_, saved, err := st.Reviews.SaveReview(ctx, in)
	require.NoError(t, err)
	require.Equal(t, reviewdb.SavedUnchanged, saved)
	in.Rating = 5
	_, _, err = st.Reviews.SaveReview(ctx, in)
	require.NoError(t, err)

	ds := deliveries(t, st, hook)
	require.Equal(t, []string{webhook.ReviewCreated, webhook.ReviewUpdated}, typesOf(ds), "no webhook for the same answer again")
	var body struct{ Data map[string]any }
	require.NoError(t, json.Unmarshal(ds[1].Payload, &body))
	assert.Nil(t, body.Data["rating"], "no shop rating")
	assert.Equal(t, []any{map[string]any{"id": r.Products[0].ID, "sku": nil, "gtin": "0012345678905", "mpn": "S3",
		"rating": 3.0, "comment": "thin"}}, body.Data["products"])
	require.NoError(t, json.Unmarshal(ds[0].Payload, &body))
	assert.EqualValues(t, 5, body.Data["rating"])
	assert.Len(t, body.Data["products"], 1)

	hs, _, err := st.Reviews.ReviewHistory(ctx, a.AccountID, r.ID, store.Page{})
	require.NoError(t, err)
	assert.Len(t, hs, 2, "created, updated: the same answer again is no change")
}

func TestReviewAuthor(t *testing.T) {
	t.Parallel()
	st, account := newStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	ev := a.Event(t, eventfixture.Event{Email: "greta.zimmermann@example.com", FirstName: "Greta", LastName: "Zimmermann"})
	r, _, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ev, Rating: 5, Locale: "de", ShowName: true})
	require.NoError(t, err)
	assert.Equal(t, "Greta Z.", r.Author("de"))
	quiet, _, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ev, Rating: 5, Locale: "de"})
	require.NoError(t, err)
	assert.Equal(t, "Verified customer", quiet.Author("en"), "consent withdrawn")
	assert.Empty(t, quiet.AuthorFirstName, "names are not even read without consent")

	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ev, Rating: 5, Locale: "de", ShowName: true})
	require.NoError(t, err)
	_, err = st.EraseCustomer(ctx, a.AccountID, store.CustomerKey{Email: "greta.zimmermann@example.com"})
	require.NoError(t, err)
	erased, err := st.Reviews.ReviewOfEvent(ctx, ev)
	require.NoError(t, err)
	assert.True(t, erased.ShowName)
	assert.Equal(t, "Verifizierter Kunde", erased.Author("de"), "an erased customer has no name left to show")
}

// TestAggregatesMatchAScan changes reviews at random — new ones, edits,
// product ratings added and dropped, reports, decisions — from several
// goroutines, and then compares every aggregate row with a count of the
// public rows.
func TestAggregatesMatchAScan(t *testing.T) {
	t.Parallel()
	st, db, account := webhookStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	var events []string
	for range 12 {
		events = append(events, a.Event(t, eventfixture.Event{Products: products}))
	}
	var wg sync.WaitGroup
	for worker := range 4 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(worker), 42))
			for range 40 {
				ev := events[rnd.IntN(len(events))]
				switch rnd.IntN(6) {
				case 0, 1, 2:
					in := reviewdb.ReviewInput{EventID: ev, Rating: rnd.IntN(6), Locale: "en"}
					for i := range products {
						if rnd.IntN(2) == 0 {
							in.Products = append(in.Products, reviewdb.ProductRating{Index: i, Rating: 1 + rnd.IntN(5)})
						}
					}
					if in.Rating == 0 && len(in.Products) == 0 {
						in.Rating = 3
					}
					_, _, err := st.Reviews.SaveReview(ctx, in)
					assert.NoError(t, err)
				case 3:
					if r, err := st.Reviews.ReviewOfEvent(ctx, ev); err == nil {
						_, _, err = st.Reviews.ReportReview(ctx, a.AccountID, r.ID, review.Reasons()[rnd.IntN(4)], "", "cli")
						if err != nil && !errors.Is(err, review.ErrSettled) {
							assert.ErrorIs(t, err, review.ErrRemoved)
						}
					}
				default:
					if r, err := st.Reviews.ReviewOfEvent(ctx, ev); err == nil {
						_, _, err = st.Reviews.ModerateReview(ctx, r.ID, review.Decisions()[rnd.IntN(2)], "")
						assert.NoError(t, err)
					}
				}
			}
		})
	}
	wg.Wait()
	requireAggregatesMatch(t, db, a.AccountID)
}

// requireAggregatesMatch compares the stored aggregates of an account with
// a scan of its public reviews and product reviews.
func requireAggregatesMatch(t *testing.T, db *sqlx.DB, accountID string) {
	t.Helper()
	type row struct {
		Kind  string `db:"kind"`
		Value string `db:"value"`
		Count int64  `db:"count"`
		Sum   int64  `db:"sum"`
		R1    int64  `db:"r1"`
		R5    int64  `db:"r5"`
	}
	var stored, scanned []row
	require.NoError(t, db.Select(&stored, `
		SELECT 'shop' AS kind, '' AS value, count, sum, r1, r5 FROM review_aggregates WHERE account_id = $1 AND count > 0
		UNION ALL
		SELECT key_kind, key_value, count, sum, r1, r5 FROM product_aggregates WHERE account_id = $1 AND count > 0
		ORDER BY 1, 2`, accountID))
	require.NoError(t, db.Select(&scanned, `
		SELECT 'shop' AS kind, '' AS value, count(*) AS count, sum(rating) AS sum,
		       count(*) FILTER (WHERE rating = 1) AS r1, count(*) FILTER (WHERE rating = 5) AS r5
		FROM reviews WHERE account_id = $1 AND public AND rating IS NOT NULL HAVING count(*) > 0
		UNION ALL
		SELECT k.kind, k.value, count(*), sum(p.rating), count(*) FILTER (WHERE p.rating = 1), count(*) FILTER (WHERE p.rating = 5)
		FROM product_reviews p, LATERAL (VALUES ('sku', p.sku), ('gtin', p.gtin), ('mpn', p.mpn)) AS k(kind, value)
		WHERE p.account_id = $1 AND p.public AND k.value IS NOT NULL GROUP BY k.kind, k.value
		ORDER BY 1, 2`, accountID))
	require.NotEmpty(t, scanned)
	assert.Equal(t, scanned, stored)
}

// Two posts of a new review at once: one creates it, the other replaces
// it; the aggregates count it once.
func TestConcurrentFirstPosts(t *testing.T) {
	t.Parallel()
	st, db, account := webhookStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	for range 5 {
		ev := a.Event(t, eventfixture.Event{Products: products})
		var wg sync.WaitGroup
		results := make([]reviewdb.Saved, 2)
		for i := range results {
			wg.Go(func() {
				_, saved, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ev, Rating: 2 + i, Locale: "en",
					Products: []reviewdb.ProductRating{{Index: 0, Rating: 4 - i}}})
				assert.NoError(t, err)
				results[i] = saved
			})
		}
		wg.Wait()
		assert.ElementsMatch(t, []reviewdb.Saved{reviewdb.SavedCreated, reviewdb.SavedUpdated}, results)
	}
	requireAggregatesMatch(t, db, a.AccountID)
}
