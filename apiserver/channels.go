package apiserver

import (
	"net/http"

	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/store/accountdb"
)

type channelJSON struct {
	ID        string    `json:"id"`
	CreatedAt timestamp `json:"createdAt"`
	UpdatedAt timestamp `json:"updatedAt"`
	Name      string    `json:"name"`
	Type      string    `json:"type"`
}

func channelOut(ch accountdb.Channel) channelJSON {
	return channelJSON{ID: ch.ID, CreatedAt: timestamp(ch.CreatedAt), UpdatedAt: timestamp(ch.UpdatedAt), Name: ch.Name, Type: ch.Type}
}

// channelIn is POST /channels; a missing or null type means native.
type channelIn struct {
	Name      string              `json:"name" required:"true"`
	Type      *string             `json:"type"`
	ID        jsonstrict.ReadOnly `json:"id"`
	CreatedAt jsonstrict.ReadOnly `json:"createdAt"`
	UpdatedAt jsonstrict.ReadOnly `json:"updatedAt"`
}

func (s accountAPI) createChannel(w http.ResponseWriter, r *http.Request) {
	var in channelIn
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	typ := accountdb.ChannelTypeNative
	var errs fieldErrors
	errs.check("name", checkName(in.Name))
	if in.Type != nil {
		typ = *in.Type
		errs.check("type", checkChannelType(typ))
	}
	if err := errs.err(); err != nil {
		s.fail(w, r, err)
		return
	}
	ch, err := s.accounts.CreateChannel(r.Context(), accountID(r), in.Name, typ)
	if err != nil {
		s.fail(w, r, about("channel", in.Name, err))
		return
	}
	w.Header().Set("Location", "/channels/"+ch.ID)
	writeJSON(w, http.StatusCreated, channelOut(ch))
}

func (s accountAPI) listChannels(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r)
	p := q.Page("chl")
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	chs, next, err := s.accounts.ListChannels(r.Context(), accountID(r), p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newList(chs, next, channelOut))
}

func (s accountAPI) getChannel(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "chl", "channel")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ch, err := s.accounts.Channel(r.Context(), accountID(r), id)
	if err != nil {
		s.fail(w, r, about("channel", "", err))
		return
	}
	writeJSON(w, http.StatusOK, channelOut(ch))
}
