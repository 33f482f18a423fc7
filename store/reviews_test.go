package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/store"
)

func TestReviews(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a, b := account(eventfixture.Setting{}), account(eventfixture.Setting{})
	first, second := a.Event(t, eventfixture.Event{}), a.Event(t, eventfixture.Event{})

	r, created, err := st.SaveReview(ctx, first, 2, "late", "de")
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, store.Review{ID: r.ID, AccountID: a.AccountID, EventID: first, EventTypeID: a.EventTypeID, ChannelID: a.ChannelID,
		Rating: 2, Comment: "late", Locale: "de", CreatedAt: r.CreatedAt, UpdatedAt: r.CreatedAt}, r)

	st.SetClock(func() time.Time { return r.CreatedAt.Add(time.Minute) })
	again, created, err := st.SaveReview(ctx, first, 4, "arrived after all", "de")
	require.NoError(t, err)
	assert.False(t, created, "one review per event: a second post replaces it")
	assert.Equal(t, r.ID, again.ID)
	assert.Equal(t, 4, again.Rating)
	assert.Equal(t, r.CreatedAt, again.CreatedAt)
	assert.Equal(t, r.CreatedAt.Add(time.Minute), again.UpdatedAt, "updatedAt moves")

	st.SetClock(func() time.Time { return r.CreatedAt.Add(2 * time.Minute) })
	other, _, err := st.SaveReview(ctx, second, 5, "", "en")
	require.NoError(t, err)
	_, _, err = st.SaveReview(ctx, b.Event(t, eventfixture.Event{}), 1, "b's", "en")
	require.NoError(t, err)

	list := func(f store.ReviewFilter) []string {
		t.Helper()
		rs, _, err := st.ListReviews(ctx, a.AccountID, f, store.Page{})
		require.NoError(t, err)
		var ids []string
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	assert.Equal(t, []string{other.ID, r.ID}, list(store.ReviewFilter{}), "newest first, the account's only")
	assert.Equal(t, []string{r.ID}, list(store.ReviewFilter{Rating: 4}))
	assert.Equal(t, []string{other.ID}, list(store.ReviewFilter{MinRating: 5}))
	assert.Equal(t, []string{other.ID, r.ID}, list(store.ReviewFilter{EventTypeID: a.EventTypeID, ChannelID: a.ChannelID}))
	from := r.CreatedAt.Add(time.Minute)
	assert.Equal(t, []string{other.ID}, list(store.ReviewFilter{CreatedFrom: &from}))
	assert.Equal(t, []string{r.ID}, list(store.ReviewFilter{CreatedTo: &from}))

	_, err = st.Review(ctx, b.AccountID, r.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "another account's review")
	e, err := st.Event(ctx, a.AccountID, first)
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

	_, _, err = st.SaveReview(ctx, store.NewID("evt"), 3, "", "en")
	assert.ErrorIs(t, err, store.ErrNotFound)
}
