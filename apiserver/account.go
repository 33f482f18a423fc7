package apiserver

import (
	"net/http"
	"time"

	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/store/accountdb"
)

// accountAPI is the routes of the account and what it sets up: branding, channels, event types, invite settings, the audit log and customers' erasure.
type accountAPI struct{ *server }

// accountJSON is GET /account: the caller's account and its branding;
// displayName defaults to name, unset fields are null.
type accountJSON struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	DisplayName string  `json:"displayName"`
	LogoURL     *string `json:"logoUrl"`
	BrandColor  *string `json:"brandColor"`
	ReplyTo     *string `json:"replyTo"`
	// Limits are the account's quotas with today's use.
	Limits limitsJSON `json:"limits"`
}

// limitJSON is one quota: limit null means none; used is today's (UTC)
// count for a daily quota, the number there is for a resource.
type limitJSON struct {
	Limit *int `json:"limit"`
	Used  int  `json:"used"`
}

// limitsJSON is GET /account's limits. recipientDailyCap counts per
// address, so it has no single use to show.
type limitsJSON struct {
	Day               string    `json:"day"` // the UTC day of the daily counts, YYYY-MM-DD
	DailySends        limitJSON `json:"dailySends"`
	RecipientDailyCap struct {
		Limit *int `json:"limit"`
	} `json:"recipientDailyCap"`
	DailyEvents      limitJSON `json:"dailyEvents"`
	Channels         limitJSON `json:"channels"`
	EventTypes       limitJSON `json:"eventTypes"`
	WebhookEndpoints limitJSON `json:"webhookEndpoints"`
}

func limitsOut(l accountdb.Limits, now time.Time) limitsJSON {
	limit := func(n int) *int {
		if n <= 0 {
			return nil
		}
		return &n
	}
	one := func(l accountdb.Limit) limitJSON { return limitJSON{Limit: limit(l.Limit), Used: l.Used} }
	out := limitsJSON{Day: now.UTC().Format(time.DateOnly), DailySends: one(l.DailySends), DailyEvents: one(l.DailyEvents),
		Channels: one(l.Channels), EventTypes: one(l.EventTypes), WebhookEndpoints: one(l.WebhookEndpoints)}
	out.RecipientDailyCap.Limit = limit(l.RecipientDailyCap)
	return out
}

// writeAccount answers the account with its limits.
func (s accountAPI) writeAccount(w http.ResponseWriter, r *http.Request, a accountdb.Account) {
	l, err := s.accounts.AccountLimits(r.Context(), a.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := accountOut(a)
	out.Limits = limitsOut(l, s.now())
	apiwire.WriteJSON(w, http.StatusOK, out)
}

func accountOut(a accountdb.Account) accountJSON {
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
	Limits      jsonstrict.ReadOnly         `json:"limits"`
}

func (s accountAPI) getAccount(w http.ResponseWriter, r *http.Request) {
	a, err := s.accounts.Account(r.Context(), accountID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeAccount(w, r, a)
}

func (s accountAPI) updateAccount(w http.ResponseWriter, r *http.Request) {
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
	a, err := s.accounts.UpdateBranding(r.Context(), accountID(r), u)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeAccount(w, r, a)
}

// BrandingUpdate validates a change of branding, for the API and the
// admin CLI alike: nil keeps a field, "" clears it, anything else must
// pass the brand package's checks. The error lists every bad field.
func BrandingUpdate(displayName, logoURL, color, replyTo *string) (accountdb.BrandingUpdate, error) {
	var errs apiwire.Invalid
	check := func(field string, v *string, validate func(string) error) {
		if v == nil || *v == "" {
			return
		}
		if err := validate(*v); err != nil {
			errs.Check(field, err.Error())
		}
	}
	check("displayName", displayName, brand.ValidateDisplayName)
	check("logoUrl", logoURL, brand.ValidateLogoURL)
	check("brandColor", color, brand.ValidateColor)
	check("replyTo", replyTo, brand.ValidateReplyTo)
	u := accountdb.BrandingUpdate{DisplayName: displayName, LogoURL: logoURL, BrandColor: color, ReplyTo: replyTo}
	if len(errs) > 0 {
		return u, invalidFields(errs) // its text is the admin CLI's message
	}
	return u, nil
}
