package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// products is an order of a product with every key, and of one without
// any.
var products = []eventfixture.Product{
	{Name: "Rain jacket </script>", SKU: "JKT-1", GTIN: "4006381333931", Brand: "Acme", URL: "https://shop.example/jkt",
		ImageURL: "https://shop.example/jkt.jpg"},
	{Name: "Gift wrap"},
}

// An erasure takes the customer's addresses out of every text around
// their review too: product comments, the shop's reply, the notes of a
// report and of the operator's decision. The ratings, the review and its
// product reviews stay.
func TestEraseCustomerScrubsReviewTexts(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := storeset.New(db, "P7D")
	ctx := context.Background()
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	const email, mobile = "kim.doe@example.com", "+4915112345678"
	ev := a.Event(t, eventfixture.Event{Email: email, Mobile: mobile, FirstName: "Kim", LastName: "Doe", Products: products})

	r, _, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: ev, Rating: 2, Comment: "write to kim.doe@example.com", Locale: "en",
		ShowName: true, Products: []reviewdb.ProductRating{{Index: 0, Rating: 1, Comment: "KIM.DOE@example.com, call +4915112345678"}}})
	require.NoError(t, err)
	_, _, err = st.Reviews.SetReply(ctx, a.AccountID, r.ID, "We have written to kim.doe@example.com", "cli-a")
	require.NoError(t, err)
	_, _, err = st.Reviews.ReportReview(ctx, a.AccountID, r.ID, review.PersonalData, "it shows kim.doe@example.com", "cli-a")
	require.NoError(t, err)
	_, _, err = st.Reviews.ModerateReview(ctx, r.ID, review.Remove, "removed: kim.doe@example.com and 4915112345678")
	require.NoError(t, err)
	for _, col := range []string{"reviews.comment", "reviews.reply_text", "product_reviews.comment", "review_history.note"} {
		assert.Contains(t, testdb.Copies(t, db, email), col, "the test puts a copy there")
	}

	_, err = st.EraseCustomer(ctx, a.AccountID, store.CustomerKey{Email: email})
	require.NoError(t, err)
	for _, s := range []string{email, "4915112345678", "Kim", "Doe"} {
		assert.Empty(t, testdb.Copies(t, db, s), "%q is gone", s)
	}
	after, err := st.Reviews.Review(ctx, a.AccountID, r.ID)
	require.NoError(t, err)
	assert.Equal(t, "write to [erased]", after.Comment)
	assert.Equal(t, "We have written to [erased]", after.ReplyText)
	require.Len(t, after.Products, 1)
	assert.Equal(t, "[erased], call [erased]", after.Products[0].Comment)
	assert.Equal(t, 1, after.Products[0].Rating)
	assert.Equal(t, "Verified customer", after.Author("en"))
	hs, _, err := st.Reviews.ReviewHistory(ctx, a.AccountID, r.ID, store.Page{})
	require.NoError(t, err)
	assert.Equal(t, "removed: [erased] and [erased]", hs[0].Note)
}
