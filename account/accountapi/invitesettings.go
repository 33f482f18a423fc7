package accountapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sendtime"
	"github.com/touchpoint/touchpoint/store/accountdb"
)

type inviteSettingJSON struct {
	ID                    string               `json:"id"`
	ChannelID             string               `json:"channelId"`
	EventTypeID           string               `json:"eventTypeId"`
	Active                bool                 `json:"active"`
	Medium                invite.Medium        `json:"medium"`
	Delay                 string               `json:"delay"`
	DelayFrom             string               `json:"delayFrom"`
	SendWindow            *sendtime.SendWindow `json:"sendWindow"`
	MinDaysBetweenInvites int                  `json:"minDaysBetweenInvites"`
	Reminder              *reminderSetting     `json:"reminder"`
	CreatedAt             apiwire.Timestamp    `json:"createdAt"`
	UpdatedAt             apiwire.Timestamp    `json:"updatedAt"`
}

func inviteSettingOut(is accountdb.InviteSetting) inviteSettingJSON {
	return inviteSettingJSON{ID: is.ID, ChannelID: is.ChannelID, EventTypeID: is.EventTypeID, Active: is.Active,
		Medium: is.Medium, Delay: is.Delay, DelayFrom: is.DelayFrom, SendWindow: is.SendWindow,
		MinDaysBetweenInvites: is.MinDaysBetweenInvites, Reminder: reminderSettingOf(is.ReminderDelay),
		CreatedAt: apiwire.Timestamp(is.CreatedAt), UpdatedAt: apiwire.Timestamp(is.UpdatedAt)}
}

// reminderSetting is the reminder of an invite setting:
// {"delay": "P3D"}, from the invite's sending; null for none.
type reminderSetting struct {
	Delay string `json:"delay" required:"true"`
}

func reminderSettingOf(delay string) *reminderSetting {
	if delay == "" {
		return nil
	}
	return &reminderSetting{Delay: delay}
}

// inviteSettingPatch is PATCH /invite-settings/{id}, a JSON merge patch
// (RFC 7396) of the mutable fields: a missing field is kept, null removes
// (only sendWindow may be removed; the decoder rejects other nulls), and
// an object merges into the current sendWindow member by member.
type inviteSettingPatch struct {
	Active                jsonstrict.Optional[bool]            `json:"active"`
	Medium                jsonstrict.Optional[invite.Medium]   `json:"medium"`
	Delay                 jsonstrict.Optional[string]          `json:"delay"`
	DelayFrom             jsonstrict.Optional[string]          `json:"delayFrom"`
	SendWindow            jsonstrict.Optional[windowPatch]     `json:"sendWindow" nullable:"true"`
	MinDaysBetweenInvites jsonstrict.Optional[int]             `json:"minDaysBetweenInvites"`
	Reminder              jsonstrict.Optional[reminderSetting] `json:"reminder" nullable:"true"`

	ID          jsonstrict.ReadOnly `json:"id"`
	ChannelID   jsonstrict.ReadOnly `json:"channelId"`
	EventTypeID jsonstrict.ReadOnly `json:"eventTypeId"`
	CreatedAt   jsonstrict.ReadOnly `json:"createdAt"`
	UpdatedAt   jsonstrict.ReadOnly `json:"updatedAt"`
}

type windowPatch struct {
	Start    jsonstrict.Optional[string] `json:"start"`
	End      jsonstrict.Optional[string] `json:"end"`
	TimeZone jsonstrict.Optional[string] `json:"timeZone"`
}

// refuseSMS is the patch's outcome on a service without an SMS provider,
// where medium sms would fail every invite (no_provider): a
// 400 naming medium, beside the patch's other field errors.
func refuseSMS(applied error) error {
	errs := apiwire.Invalid{{Field: "medium", Message: "sms is not available: no SMS provider is configured"}}
	var fe apiwire.Invalid
	switch {
	case errors.As(applied, &fe) && len(fe) > 0:
		errs = append(errs, fe...)
	case applied != nil:
		return applied
	}
	return errs.Err()
}

// Invite setting limits.
const maxMinDaysBetweenInvites = 365

// apply merges the patch into is and validates the result; every invalid
// field is reported with its path.
func (p inviteSettingPatch) apply(is *accountdb.InviteSetting) error {
	var errs apiwire.Invalid
	if p.Active.Set {
		is.Active = p.Active.Value
	}
	if p.Medium.Set {
		is.Medium = p.Medium.Value
		errs.Check("medium", apiwire.OneOf(is.Medium, invite.Email, invite.SMS))
	}
	if p.Delay.Set {
		is.Delay = p.Delay.Value
		if _, err := sendtime.ParseDuration(is.Delay); err != nil {
			errs.Check("delay", err.Error())
		}
	}
	if p.DelayFrom.Set {
		is.DelayFrom = p.DelayFrom.Value
		errs.Check("delayFrom", apiwire.OneOf(is.DelayFrom, sendtime.FromEvent, sendtime.FromTransaction, sendtime.FromDelivery))
	}
	if p.MinDaysBetweenInvites.Set {
		is.MinDaysBetweenInvites = p.MinDaysBetweenInvites.Value
		if n := is.MinDaysBetweenInvites; n < 0 || n > maxMinDaysBetweenInvites {
			errs.Check("minDaysBetweenInvites", fmt.Sprintf("must be an integer from 0 to %d", maxMinDaysBetweenInvites))
		}
	}
	switch {
	case p.Reminder.Null:
		is.ReminderDelay = ""
	case p.Reminder.Set:
		is.ReminderDelay = p.Reminder.Value.Delay
		if _, err := sendtime.ParseReminderDelay(is.ReminderDelay); err != nil {
			errs.Check("reminder.delay", err.Error())
		}
	}
	switch {
	case p.SendWindow.Null:
		is.SendWindow = nil
	case p.SendWindow.Set:
		is.SendWindow = mergeWindow(&errs, is.SendWindow, p.SendWindow.Value)
	}
	return errs.Err()
}

// mergeWindow merges a sendWindow patch into the current window (nil: a
// new window, whose three members are then all required).
func mergeWindow(errs *apiwire.Invalid, cur *sendtime.SendWindow, p windowPatch) *sendtime.SendWindow {
	w, mistakes := sendtime.Merge(cur, p.Start.Patch(), p.End.Patch(), p.TimeZone.Patch())
	for _, m := range mistakes {
		field := "sendWindow"
		if m.Field != "" {
			field += "." + m.Field
		}
		errs.Check(field, m.Message)
	}
	return &w
}

// ListInviteSettings is GET /invite-settings: the account's invite
// settings, by channel or event type.
func (h *Handler) ListInviteSettings(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "channelId", "eventTypeId")
	f := accountdb.InviteSettingFilter{ChannelID: q.ID("channelId", "chl"), EventTypeID: q.ID("eventTypeId", "ety")}
	p := q.Page("ist")
	if err := q.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	settings, next, err := h.store.ListInviteSettings(r.Context(), h.api.AccountID(r), f, p)
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(settings, next, inviteSettingOut))
}

// GetInviteSetting is GET /invite-settings/{id}.
func (h *Handler) GetInviteSetting(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "ist", "invite setting")
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	is, err := h.store.InviteSetting(r.Context(), h.api.AccountID(r), id)
	if err != nil {
		h.api.Fail(w, r, apiwire.About("invite setting", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, inviteSettingOut(is))
}

// UpdateInviteSetting is PATCH /invite-settings/{id}: merges the patch
// into the setting; 200 with the setting.
func (h *Handler) UpdateInviteSetting(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "ist", "invite setting")
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	var in inviteSettingPatch
	if err := h.api.DecodeJSON(w, r, &in); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	apply := in.apply
	if in.Medium.Set && in.Medium.Value == invite.SMS && !h.sms {
		apply = func(is *accountdb.InviteSetting) error { return refuseSMS(in.apply(is)) }
	}
	// The merge runs under the row lock, so concurrent patches of
	// different fields both survive.
	is, err := h.store.UpdateInviteSetting(r.Context(), h.api.AccountID(r), id, apply)
	if err != nil {
		h.api.Fail(w, r, apiwire.About("invite setting", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, inviteSettingOut(is))
}
