package suppressionapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/contact/suppressionapi"
	"github.com/touchpoint/touchpoint/internal/apiwiretest"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
)

// The handlers need no database: the API is apiwiretest's, and what
// they ask of the suppression list is a small interface, with a fake in its place.

type fakeList struct {
	suppressionapi.Store
	account string
	filter  *suppressiondb.SuppressionFilter
}

func (l *fakeList) ListSuppressions(_ context.Context, accountID string, f suppressiondb.SuppressionFilter, _ pg.Page) (
	[]suppressiondb.Suppression, *pg.Cursor, error) {
	l.account, l.filter = accountID, &f
	return []suppressiondb.Suppression{{Address: f.Address, Medium: invite.Email, Reason: invite.Bounced, By: "provider",
		CreatedAt: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)}}, nil, nil
}

func TestListAsksTheListWithTheNormalisedAddress(t *testing.T) {
	t.Parallel()
	api, list := &apiwiretest.API{}, &fakeList{}
	h := suppressionapi.New(api, list)

	w := httptest.NewRecorder()
	h.List(w, httptest.NewRequest(http.MethodGet, "/suppressions?address=%20Ann@Example.COM&reason=bounced", nil))
	require.NoError(t, api.Failed)
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, apiwiretest.AccountID, list.account)
	assert.Equal(t, suppressiondb.SuppressionFilter{Address: "ann@example.com", Reason: invite.Bounced}, *list.filter)
	var out struct {
		Items []map[string]any `json:"items"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	require.Len(t, out.Items, 1)
	assert.Equal(t, "ann@example.com", out.Items[0]["address"])
	assert.Equal(t, "2026-11-29T08:00:00.000Z", out.Items[0]["createdAt"])
}

func TestListRefusesAnUnknownReasonWithoutAskingTheList(t *testing.T) {
	t.Parallel()
	api, list := &apiwiretest.API{}, &fakeList{}
	h := suppressionapi.New(api, list)

	h.List(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/suppressions?reason=annoyed", nil))
	require.Error(t, api.Failed)
	assert.Contains(t, api.Failed.Error(), "reason")
	assert.Nil(t, list.filter, "the list is not asked")
}
