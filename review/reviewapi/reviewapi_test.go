package reviewapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/mux"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/apiwiretest"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/review/reviewapi"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

// The handlers need no database: the API is apiwiretest's, and what
// they ask of the reviews is a small interface, with a fake in its place.

type fakeReviews struct {
	reviewapi.Store
	filter    *reviewdb.ReviewFilter
	reported  []string // account, id, actor
	reportErr error
}

func (f *fakeReviews) ListReviews(_ context.Context, _ string, rf reviewdb.ReviewFilter, _ pg.Page) ([]reviewdb.Review, *pg.Cursor, error) {
	f.filter = &rf
	return []reviewdb.Review{{ID: "rev-1", Rating: 4, Status: review.Published, Public: true}}, nil, nil
}

func (f *fakeReviews) ReportReview(_ context.Context, accountID, id string, _ review.Reason, _, actor string) (reviewdb.Review, bool, error) {
	f.reported = []string{accountID, id, actor}
	return reviewdb.Review{ID: id}, true, f.reportErr
}

const reviewID = "rev-0b9f1c4e-1d2a-4c3b-8e5f-6a7b8c9d0e1f"

func report(h *reviewapi.Handler, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/reviews/"+reviewID+"/report", strings.NewReader(body))
	w := httptest.NewRecorder()
	h.Report(w, mux.SetURLVars(r, map[string]string{"id": reviewID}))
	return w
}

func TestListAsksTheStoreWithTheFilters(t *testing.T) {
	t.Parallel()
	api, store := &apiwiretest.API{}, &fakeReviews{}
	h := reviewapi.New(api, store)

	w := httptest.NewRecorder()
	h.List(w, httptest.NewRequest(http.MethodGet, "/reviews?status=published&minRating=4", nil))
	require.NoError(t, api.Failed)
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, reviewdb.ReviewFilter{MinRating: 4, Status: review.Published}, *store.filter)
	var out struct {
		Items []map[string]any `json:"items"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	require.Len(t, out.Items, 1)
	assert.Equal(t, "rev-1", out.Items[0]["id"])
	assert.Nil(t, out.Items[0]["reply"], "no reply is null")
}

func TestListRefusesAnUnknownStatusWithoutAskingTheStore(t *testing.T) {
	t.Parallel()
	api, store := &apiwiretest.API{}, &fakeReviews{}
	h := reviewapi.New(api, store)

	h.List(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/reviews?status=hidden", nil))
	require.Error(t, api.Failed)
	assert.Contains(t, api.Failed.Error(), "status")
	assert.Nil(t, store.filter, "the store is not asked")
}

func TestReportIsTheCallersAndARemovedReviewIsAConflict(t *testing.T) {
	t.Parallel()
	api, store := &apiwiretest.API{}, &fakeReviews{}
	h := reviewapi.New(api, store)

	require.Equal(t, http.StatusOK, report(h, `{"reason":"spam"}`).Code)
	require.NoError(t, api.Failed)
	assert.Equal(t, []string{apiwiretest.AccountID, reviewID, apiwiretest.ClientID}, store.reported)

	store.reportErr = review.ErrRemoved
	report(h, `{"reason":"spam"}`)
	var e *apiwire.Error
	require.ErrorAs(t, api.Failed, &e)
	assert.Equal(t, http.StatusConflict, e.Status)
}

func TestReportRefusesAnUnknownReasonWithoutAskingTheStore(t *testing.T) {
	t.Parallel()
	api, store := &apiwiretest.API{}, &fakeReviews{}
	h := reviewapi.New(api, store)

	report(h, `{"reason":"boring"}`)
	var fields apiwire.Invalid
	require.ErrorAs(t, api.Failed, &fields)
	assert.Equal(t, "reason", fields[0].Field)
	assert.Nil(t, store.reported, "the store is not asked")
}
