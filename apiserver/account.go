package apiserver

import (
	"net/http"

	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/store"
)

// accountJSON is GET /account: the caller's account and its branding;
// displayName defaults to name, unset fields are null.
type accountJSON struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	DisplayName string  `json:"displayName"`
	LogoURL     *string `json:"logoUrl"`
	BrandColor  *string `json:"brandColor"`
	ReplyTo     *string `json:"replyTo"`
}

func accountOut(a store.Account) accountJSON {
	orNull := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return accountJSON{ID: a.ID, Name: a.Name, DisplayName: a.Brand().DisplayName,
		LogoURL: orNull(a.LogoURL), BrandColor: orNull(a.BrandColor), ReplyTo: orNull(a.ReplyTo)}
}

// accountPatch is PATCH /account, a JSON merge patch: null clears a field
// (displayName then falls back to the account's name).
type accountPatch struct {
	DisplayName jsonstrict.Optional[string] `json:"displayName" nullable:"true"`
	LogoURL     jsonstrict.Optional[string] `json:"logoUrl" nullable:"true"`
	BrandColor  jsonstrict.Optional[string] `json:"brandColor" nullable:"true"`
	ReplyTo     jsonstrict.Optional[string] `json:"replyTo" nullable:"true"`
	ID          jsonstrict.ReadOnly         `json:"id"`
	Name        jsonstrict.ReadOnly         `json:"name"`
}

func (s *server) getAccount(w http.ResponseWriter, r *http.Request) {
	a, err := s.store.Account(r.Context(), accountID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, accountOut(a))
}

func (s *server) updateAccount(w http.ResponseWriter, r *http.Request) {
	var in accountPatch
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	u, err := BrandingUpdate(in.DisplayName.Patch(), in.LogoURL.Patch(), in.BrandColor.Patch(), in.ReplyTo.Patch())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.store.UpdateBranding(r.Context(), accountID(r), u)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, accountOut(a))
}

// BrandingUpdate validates a change of branding, for the API and the
// admin CLI alike: nil keeps a field, "" clears it, anything else must
// pass the brand package's checks. The error lists every bad field.
func BrandingUpdate(displayName, logoURL, color, replyTo *string) (store.BrandingUpdate, error) {
	var errs fieldErrors
	check := func(field string, v *string, validate func(string) error) {
		if v == nil || *v == "" {
			return
		}
		if err := validate(*v); err != nil {
			errs.check(field, err.Error())
		}
	}
	check("displayName", displayName, brand.ValidateDisplayName)
	check("logoUrl", logoURL, brand.ValidateLogoURL)
	check("brandColor", color, brand.ValidateColor)
	check("replyTo", replyTo, brand.ValidateReplyTo)
	return store.BrandingUpdate{DisplayName: displayName, LogoURL: logoURL, BrandColor: color, ReplyTo: replyTo}, errs.err()
}
