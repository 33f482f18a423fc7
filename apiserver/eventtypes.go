package apiserver

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

func (s accountAPI) createEventType(w http.ResponseWriter, r *http.Request) {
	var in eventTypeIn
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	var errs apiwire.Invalid
	errs.Check("name", checkName(in.Name))
	if err := errs.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	active := in.Active == nil || *in.Active
	et, err := s.accounts.CreateEventType(r.Context(), accountID(r), in.Name, active)
	if err != nil {
		s.fail(w, r, apiwire.About("event type", in.Name, err))
		return
	}
	w.Header().Set("Location", "/event-types/"+et.ID)
	apiwire.WriteJSON(w, http.StatusCreated, eventTypeOut(et))
}

func (s accountAPI) listEventTypes(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "name", "active")
	f := accountdb.EventTypeFilter{Active: q.Bool("active")}
	if name := q.Get("name"); name != "" {
		f.Name = &name
	}
	p := q.Page("ety")
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	ets, next, err := s.accounts.ListEventTypes(r.Context(), accountID(r), f, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(ets, next, eventTypeOut))
}

func (s accountAPI) getEventType(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "ety", "event type")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	et, err := s.accounts.EventType(r.Context(), accountID(r), id)
	if err != nil {
		s.fail(w, r, apiwire.About("event type", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, eventTypeOut(et))
}

func (s accountAPI) updateEventType(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "ety", "event type")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var in eventTypePatch
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
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
		s.fail(w, r, err)
		return
	}
	et, err := s.accounts.UpdateEventType(r.Context(), accountID(r), id, u)
	if err != nil {
		name := ""
		if u.Name != nil {
			name = *u.Name
		}
		s.fail(w, r, apiwire.About("event type", name, err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, eventTypeOut(et))
}
