// Package accountapi serves the API's routes of an account and what it
// sets up (/account, /channels/…, /event-types/…, /invite-settings/…):
// the account with its branding and its quotas' use today, the channels
// and event types its events name, and the invite setting of each pair
// of them — when, by which medium and how often an invite goes out, and
// its reminder. The rules (what a brand may hold, what a delay or a send
// window is) are packages brand's and sendtime's; these handlers read,
// check and write, through a small interface of what they use of
// store/accountdb. The API mounts them on the routes of its route table,
// behind its authentication and access groups, and answers their errors
// (apiwire.API).
package accountapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
)

// Store is what the handlers read and change of an account and what it
// sets up: branding, quotas, channels, event types, invite settings.
type Store interface {
	Account(ctx context.Context, id string) (accountdb.Account, error)
	UpdateBranding(ctx context.Context, id string, u accountdb.BrandingUpdate) (accountdb.Account, error)
	AccountLimits(ctx context.Context, accountID string) (accountdb.Limits, error)

	CreateChannel(ctx context.Context, accountID, name, typ string) (accountdb.Channel, error)
	Channel(ctx context.Context, accountID, id string) (accountdb.Channel, error)
	ListChannels(ctx context.Context, accountID string, p store.Page) ([]accountdb.Channel, *store.Cursor, error)

	CreateEventType(ctx context.Context, accountID, name string, active bool) (accountdb.EventType, error)
	EventType(ctx context.Context, accountID, id string) (accountdb.EventType, error)
	ListEventTypes(ctx context.Context, accountID string, f accountdb.EventTypeFilter, p store.Page) ([]accountdb.EventType, *store.Cursor, error)
	UpdateEventType(ctx context.Context, accountID, id string, u accountdb.EventTypeUpdate) (accountdb.EventType, error)

	InviteSetting(ctx context.Context, accountID, id string) (accountdb.InviteSetting, error)
	ListInviteSettings(ctx context.Context, accountID string, f accountdb.InviteSettingFilter, p store.Page) ([]accountdb.InviteSetting, *store.Cursor, error)
	UpdateInviteSetting(ctx context.Context, accountID, id string, apply func(*accountdb.InviteSetting) error) (accountdb.InviteSetting, error)
}

// Options are what the handlers are built on.
type Options struct {
	API   apiwire.API // required
	Store Store       // required
	// SMS reports whether an SMS provider is configured: without one an
	// invite setting may not send by text message.
	SMS bool
	// Now is the clock of the day whose use GET /account shows; default
	// time.Now.
	Now func() time.Time
}

// Handler serves the routes of the account and its setup. Its methods
// are the handlers of the routes the API mounts.
type Handler struct {
	api   apiwire.API
	store Store
	sms   bool
	now   func() time.Time
}

// New builds the handlers. It panics without API or Store, which is a
// wiring mistake.
func New(o Options) *Handler {
	if o.API == nil || o.Store == nil {
		panic("accountapi.New: API and Store are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Handler{api: o.API, store: o.Store, sms: o.SMS, now: o.Now}
}

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
func (h *Handler) writeAccount(w http.ResponseWriter, r *http.Request, a accountdb.Account) {
	l, err := h.store.AccountLimits(r.Context(), a.ID)
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	out := accountOut(a)
	out.Limits = limitsOut(l, h.now())
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

// GetAccount is GET /account: the caller's account, its branding and its
// quotas with today's use.
func (h *Handler) GetAccount(w http.ResponseWriter, r *http.Request) {
	a, err := h.store.Account(r.Context(), h.api.AccountID(r))
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	h.writeAccount(w, r, a)
}

// UpdateAccount is PATCH /account: changes the branding; 200 with the
// account.
func (h *Handler) UpdateAccount(w http.ResponseWriter, r *http.Request) {
	var in accountPatch
	if err := h.api.DecodeJSON(w, r, &in); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	u, err := BrandingUpdate(in.DisplayName.Patch(), in.LogoURL.Patch(), in.BrandColor.Patch(), in.ReplyTo.Patch())
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	a, err := h.store.UpdateBranding(r.Context(), h.api.AccountID(r), u)
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	h.writeAccount(w, r, a)
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
		return u, brandingError{errs} // its text is the admin CLI's message
	}
	return u, nil
}

// brandingError is a refused change of branding: the API answers its
// fields as it answers every request's mistakes (a 400 listing them), and
// the admin CLI prints its text, which names the first and counts the
// others.
type brandingError struct{ fields apiwire.Invalid }

func (e brandingError) Error() string {
	return fmt.Sprintf("%d %s", http.StatusBadRequest, e.fields.Detail())
}

func (e brandingError) Unwrap() error { return e.fields }
