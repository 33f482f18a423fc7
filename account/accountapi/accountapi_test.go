package accountapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/account/accountapi"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/apiwiretest"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/accountdb"
)

// The handlers need no database: the API is apiwiretest's, and what
// they ask of the account is a small interface, with a fake in its place.

type fakeAccounts struct {
	accountapi.Store
	setting  accountdb.InviteSetting
	channels int // channels created
}

func (f *fakeAccounts) Account(_ context.Context, id string) (accountdb.Account, error) {
	return accountdb.Account{ID: id, Name: "Nordlicht"}, nil
}

func (f *fakeAccounts) AccountLimits(context.Context, string) (accountdb.Limits, error) {
	return accountdb.Limits{DailySends: accountdb.Limit{Limit: 500, Used: 7}}, nil
}

func (f *fakeAccounts) CreateChannel(_ context.Context, _, name, typ string) (accountdb.Channel, error) {
	f.channels++
	return accountdb.Channel{ID: "chl-1", Name: name, Type: typ}, nil
}

func (f *fakeAccounts) UpdateInviteSetting(_ context.Context, _, id string, apply func(*accountdb.InviteSetting) error) (accountdb.InviteSetting, error) {
	is := f.setting
	if err := apply(&is); err != nil {
		return accountdb.InviteSetting{}, err
	}
	f.setting = is
	return is, nil
}

func TestGetAccountShowsTodaysUseOnTheHandlersClock(t *testing.T) {
	t.Parallel()
	api := &apiwiretest.API{}
	now := time.Date(2026, 11, 22, 23, 30, 0, 0, time.FixedZone("", -2*3600)) // 01:30 UTC the next day
	h := accountapi.New(accountapi.Options{API: api, Store: &fakeAccounts{}, Now: func() time.Time { return now }})

	w := httptest.NewRecorder()
	h.GetAccount(w, httptest.NewRequest(http.MethodGet, "/account", nil))
	require.NoError(t, api.Failed)
	require.Equal(t, http.StatusOK, w.Code)
	var out struct {
		ID          string  `json:"id"`
		DisplayName string  `json:"displayName"`
		LogoURL     *string `json:"logoUrl"`
		Limits      struct {
			Day        string `json:"day"`
			DailySends struct {
				Limit *int `json:"limit"`
				Used  int  `json:"used"`
			} `json:"dailySends"`
			DailyEvents struct {
				Limit *int `json:"limit"`
			} `json:"dailyEvents"`
		} `json:"limits"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	assert.Equal(t, apiwiretest.AccountID, out.ID)
	assert.Equal(t, "Nordlicht", out.DisplayName, "the display name falls back to the name")
	assert.Nil(t, out.LogoURL)
	assert.Equal(t, "2026-11-23", out.Limits.Day, "the day of the counts is UTC's")
	require.NotNil(t, out.Limits.DailySends.Limit)
	assert.Equal(t, 500, *out.Limits.DailySends.Limit)
	assert.Equal(t, 7, out.Limits.DailySends.Used)
	assert.Nil(t, out.Limits.DailyEvents.Limit, "no quota is null")
}

func TestCreateChannelRefusesANameWithSurroundingSpace(t *testing.T) {
	t.Parallel()
	api, st := &apiwiretest.API{}, &fakeAccounts{}
	h := accountapi.New(accountapi.Options{API: api, Store: st})

	h.CreateChannel(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/channels", strings.NewReader(`{"name":" Shop"}`)))
	var fe apiwire.Invalid
	require.ErrorAs(t, api.Failed, &fe)
	assert.Equal(t, "name", fe[0].Field)
	assert.Zero(t, st.channels, "the store is not asked")

	api.Failed = nil
	w := httptest.NewRecorder()
	h.CreateChannel(w, httptest.NewRequest(http.MethodPost, "/channels", strings.NewReader(`{"name":"Shop"}`)))
	require.NoError(t, api.Failed)
	assert.Equal(t, http.StatusCreated, w.Code)
	assert.Equal(t, "/channels/chl-1", w.Header().Get("Location"))
	assert.Contains(t, w.Body.String(), `"type":"native"`)
}

const settingID = "ist-0b9f1c4e-1d2a-4c3b-8e5f-6a7b8c9d0e1f"

func patchSetting(h *accountapi.Handler, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPatch, "/invite-settings/"+settingID, strings.NewReader(body))
	w := httptest.NewRecorder()
	h.UpdateInviteSetting(w, mux.SetURLVars(r, map[string]string{"id": settingID}))
	return w
}

func TestTextMessagesNeedAnSMSProvider(t *testing.T) {
	t.Parallel()
	api := &apiwiretest.API{}
	st := &fakeAccounts{setting: accountdb.InviteSetting{ID: settingID, Medium: invite.Email, Delay: "P1D"}}
	h := accountapi.New(accountapi.Options{API: api, Store: st})

	patchSetting(h, `{"medium":"sms","delay":"soon"}`)
	var fe apiwire.Invalid
	require.ErrorAs(t, api.Failed, &fe)
	require.Len(t, fe, 2, "the patch's other mistakes are listed too")
	assert.Equal(t, "medium", fe[0].Field)
	assert.Equal(t, "delay", fe[1].Field)
	assert.Equal(t, invite.Email, st.setting.Medium, "nothing changes")

	api.Failed = nil
	h = accountapi.New(accountapi.Options{API: api, Store: st, SMS: true})
	w := patchSetting(h, `{"medium":"sms"}`)
	require.NoError(t, api.Failed)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, invite.SMS, st.setting.Medium)
}

func TestBrandingUpdateListsEveryBadField(t *testing.T) {
	t.Parallel()
	bad, good := "not a colour", "Nordlicht Outdoor"
	_, err := accountapi.BrandingUpdate(&good, &bad, &bad, nil)
	var fe apiwire.Invalid
	require.True(t, errors.As(err, &fe), "the API answers it as a request's mistakes")
	require.Len(t, fe, 2)
	assert.Equal(t, "logoUrl", fe[0].Field)
	assert.Equal(t, "brandColor", fe[1].Field)
	assert.True(t, strings.HasPrefix(err.Error(), "400 logoUrl: "), err.Error())
	assert.True(t, strings.HasSuffix(err.Error(), " (and 1 more error)"), err.Error())

	u, err := accountapi.BrandingUpdate(&good, nil, new(""), nil)
	require.NoError(t, err, `"" clears a field`)
	assert.Equal(t, &good, u.DisplayName)
}
