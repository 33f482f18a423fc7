package statsapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/apiwiretest"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/stats/statsapi"
	"github.com/touchpoint/touchpoint/store/statsdb"
)

// The handlers need no database: the API is apiwiretest's, and what
// they ask of the counts is a small interface, with a fake in its place.

type fakeCounts struct {
	query  *statsdb.Query
	groups []stats.Group
	err    error
}

func (f *fakeCounts) InviteStats(_ context.Context, q statsdb.Query) ([]stats.Group, error) {
	f.query = &q
	return f.groups, f.err
}

func TestReviewsCountEveryDayOfThePeriod(t *testing.T) {
	t.Parallel()
	var c stats.Counts
	c[stats.Rated5], c[stats.Rated4] = 2, 1
	api, counts := &apiwiretest.API{}, &fakeCounts{groups: []stats.Group{{Key: "2026-11-02", Counts: c}}}
	h := statsapi.New(api, counts)

	w := httptest.NewRecorder()
	h.Reviews(w, httptest.NewRequest(http.MethodGet, "/stats/reviews?from=2026-11-01&to=2026-11-03&timeZone=Europe/Berlin", nil))
	require.NoError(t, api.Failed)
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, apiwiretest.AccountID, counts.query.AccountID)
	assert.Equal(t, stats.GroupDay, counts.query.GroupBy)
	var out struct {
		TimeZone string         `json:"timeZone"`
		Total    review.Summary `json:"total"`
		Items    []struct {
			Key   string `json:"key"`
			Count int64  `json:"count"`
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	assert.Equal(t, "Europe/Berlin", out.TimeZone)
	assert.Equal(t, int64(3), out.Total.Count)
	require.NotNil(t, out.Total.Average)
	assert.Equal(t, "4.7", out.Total.Average.String())
	require.Len(t, out.Items, 3, "a day without reviews is there too")
	assert.Equal(t, "2026-11-02", out.Items[1].Key)
	assert.Equal(t, int64(3), out.Items[1].Count)
}

func TestATimeZoneTheDatabaseDoesNotKnowIsTheParametersMistake(t *testing.T) {
	t.Parallel()
	api, counts := &apiwiretest.API{}, &fakeCounts{err: statsdb.ErrUnknownTimeZone}
	h := statsapi.New(api, counts)

	h.Invites(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/stats/invites?from=2026-11-01&to=2026-11-03&timeZone=Europe/Berlin", nil))
	var fields apiwire.Invalid
	require.ErrorAs(t, api.Failed, &fields)
	assert.Equal(t, apiwire.Invalid{{Field: "timeZone", Message: "is not a time zone the database knows"}}, fields)
}

func TestAnUnknownGroupingIsRefusedWithoutAskingTheStore(t *testing.T) {
	t.Parallel()
	api, counts := &apiwiretest.API{}, &fakeCounts{}
	h := statsapi.New(api, counts)

	h.Invites(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/stats/invites?from=2026-11-01&to=2026-11-03&groupBy=week", nil))
	require.Error(t, api.Failed)
	assert.Contains(t, api.Failed.Error(), "groupBy")
	assert.Nil(t, counts.query, "the store is not asked")
}
