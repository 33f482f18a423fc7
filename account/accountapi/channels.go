package accountapi

import (
	"net/http"

	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/store/accountdb"
)

type channelJSON struct {
	ID        string            `json:"id"`
	CreatedAt apiwire.Timestamp `json:"createdAt"`
	UpdatedAt apiwire.Timestamp `json:"updatedAt"`
	Name      string            `json:"name"`
	Type      string            `json:"type"`
}

func channelOut(ch accountdb.Channel) channelJSON {
	return channelJSON{ID: ch.ID, CreatedAt: apiwire.Timestamp(ch.CreatedAt), UpdatedAt: apiwire.Timestamp(ch.UpdatedAt), Name: ch.Name, Type: ch.Type}
}

// channelIn is POST /channels; a missing or null type means native.
type channelIn struct {
	Name      string              `json:"name" required:"true"`
	Type      *string             `json:"type"`
	ID        jsonstrict.ReadOnly `json:"id"`
	CreatedAt jsonstrict.ReadOnly `json:"createdAt"`
	UpdatedAt jsonstrict.ReadOnly `json:"updatedAt"`
}

// CreateChannel is POST /channels: 201 with the channel, where it lives in
// Location.
func (h *Handler) CreateChannel(w http.ResponseWriter, r *http.Request) {
	var in channelIn
	if err := h.api.DecodeJSON(w, r, &in); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	typ := accountdb.ChannelTypeNative
	var errs apiwire.Invalid
	errs.Check("name", checkName(in.Name))
	if in.Type != nil {
		typ = *in.Type
		errs.Check("type", checkChannelType(typ))
	}
	if err := errs.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	ch, err := h.store.CreateChannel(r.Context(), h.api.AccountID(r), in.Name, typ)
	if err != nil {
		h.api.Fail(w, r, apiwire.About("channel", in.Name, err))
		return
	}
	w.Header().Set("Location", "/channels/"+ch.ID)
	apiwire.WriteJSON(w, http.StatusCreated, channelOut(ch))
}

// ListChannels is GET /channels: the account's channels.
func (h *Handler) ListChannels(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r)
	p := q.Page("chl")
	if err := q.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	chs, next, err := h.store.ListChannels(r.Context(), h.api.AccountID(r), p)
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(chs, next, channelOut))
}

// GetChannel is GET /channels/{id}.
func (h *Handler) GetChannel(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "chl", "channel")
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	ch, err := h.store.Channel(r.Context(), h.api.AccountID(r), id)
	if err != nil {
		h.api.Fail(w, r, apiwire.About("channel", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, channelOut(ch))
}
