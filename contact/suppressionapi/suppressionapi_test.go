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
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
)

// The handlers need no database: what they ask of the API and of the
// suppression list are small interfaces, and these fakes stand in.

type fakeAPI struct{ failed error }

func (a *fakeAPI) AccountID(*http.Request) string { return "acc-1" }
func (a *fakeAPI) ClientID(*http.Request) string  { return "cli-1" }
func (a *fakeAPI) DecodeJSON(_ http.ResponseWriter, r *http.Request, dst any) error {
	return json.NewDecoder(r.Body).Decode(dst)
}
func (a *fakeAPI) Fail(w http.ResponseWriter, _ *http.Request, err error) {
	a.failed = err
	w.WriteHeader(http.StatusBadRequest)
}

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
	api, list := &fakeAPI{}, &fakeList{}
	h := suppressionapi.New(suppressionapi.Options{API: api, Store: list})

	w := httptest.NewRecorder()
	h.List(w, httptest.NewRequest(http.MethodGet, "/suppressions?address=%20Ann@Example.COM&reason=bounced", nil))
	require.NoError(t, api.failed)
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "acc-1", list.account)
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
	api, list := &fakeAPI{}, &fakeList{}
	h := suppressionapi.New(suppressionapi.Options{API: api, Store: list})

	h.List(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/suppressions?reason=annoyed", nil))
	require.Error(t, api.failed)
	assert.Contains(t, api.failed.Error(), "reason")
	assert.Nil(t, list.filter, "the list is not asked")
}
