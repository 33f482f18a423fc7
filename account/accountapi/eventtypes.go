package accountapi

import (
	"net/http"

	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/store/accountdb"
)

type eventTypeJSON struct {
	ID        string            `json:"id"`
	CreatedAt apiwire.Timestamp `json:"createdAt"`
	UpdatedAt apiwire.Timestamp `json:"updatedAt"`
	Active    bool              `json:"active"`
	Name      string            `json:"name"`
}

func eventTypeOut(et accountdb.EventType) eventTypeJSON {
	return eventTypeJSON{ID: et.ID, CreatedAt: apiwire.Timestamp(et.CreatedAt), UpdatedAt: apiwire.Timestamp(et.UpdatedAt), Active: et.Active, Name: et.Name}
}

// eventTypeIn is POST /event-types: active defaults to true.
type eventTypeIn struct {
	Name      string              `json:"name" required:"true"`
	Active    *bool               `json:"active"`
	ID        jsonstrict.ReadOnly `json:"id"`
	CreatedAt jsonstrict.ReadOnly `json:"createdAt"`
	UpdatedAt jsonstrict.ReadOnly `json:"updatedAt"`
}

// eventTypePatch is PATCH /event-types/{id}, a JSON merge patch.
type eventTypePatch struct {
	Name      jsonstrict.Optional[string] `json:"name"`
	Active    jsonstrict.Optional[bool]   `json:"active"`
	ID        jsonstrict.ReadOnly         `json:"id"`
	CreatedAt jsonstrict.ReadOnly         `json:"createdAt"`
	UpdatedAt jsonstrict.ReadOnly         `json:"updatedAt"`
}

// CreateEventType is POST /event-types: 201 with the event type, where
// it lives in Location; 409 when its name is taken.
func (h *Handler) CreateEventType(w http.ResponseWriter, r *http.Request) {
	var in eventTypeIn
	if err := h.api.DecodeJSON(w, r, &in); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	var errs apiwire.Invalid
	errs.Check("name", checkName(in.Name))
	if err := errs.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	active := in.Active == nil || *in.Active
	et, err := h.store.CreateEventType(r.Context(), h.api.AccountID(r), in.Name, active)
	if err != nil {
		h.api.Fail(w, r, apiwire.About("event type", in.Name, err))
		return
	}
	w.Header().Set("Location", "/event-types/"+et.ID)
	apiwire.WriteJSON(w, http.StatusCreated, eventTypeOut(et))
}

// ListEventTypes is GET /event-types: the account's event types, by name
// or activity.
func (h *Handler) ListEventTypes(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "name", "active")
	f := accountdb.EventTypeFilter{Active: q.Bool("active")}
	if name := q.Get("name"); name != "" {
		f.Name = &name
	}
	p := q.Page("ety")
	if err := q.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	ets, next, err := h.store.ListEventTypes(r.Context(), h.api.AccountID(r), f, p)
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(ets, next, eventTypeOut))
}

// GetEventType is GET /event-types/{id}.
func (h *Handler) GetEventType(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "ety", "event type")
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	et, err := h.store.EventType(r.Context(), h.api.AccountID(r), id)
	if err != nil {
		h.api.Fail(w, r, apiwire.About("event type", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, eventTypeOut(et))
}

// UpdateEventType is PATCH /event-types/{id}: renames, activates or
// deactivates; 200 with the event type.
func (h *Handler) UpdateEventType(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "ety", "event type")
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	var in eventTypePatch
	if err := h.api.DecodeJSON(w, r, &in); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	var u accountdb.EventTypeUpdate
	var errs apiwire.Invalid
	if in.Name.Set {
		errs.Check("name", checkName(in.Name.Value))
		u.Name = &in.Name.Value
	}
	if in.Active.Set {
		u.Active = &in.Active.Value
	}
	if err := errs.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	et, err := h.store.UpdateEventType(r.Context(), h.api.AccountID(r), id, u)
	if err != nil {
		name := ""
		if u.Name != nil {
			name = *u.Name
		}
		h.api.Fail(w, r, apiwire.About("event type", name, err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, eventTypeOut(et))
}
