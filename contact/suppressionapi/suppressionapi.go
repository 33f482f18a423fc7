// Package suppressionapi serves the API's routes of an account's
// suppression list (/suppressions/…): its entries, putting an address on
// it, lifting one (a customer's own wish only with their consent), and an
// address's history on it. What an address is, is package contact's;
// the list is kept by store/suppressiondb. The API mounts these handlers
// on the routes of its route table, behind its authentication and access
// groups, and answers their errors (apiwire.API).
package suppressionapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/touchpoint/touchpoint/contact"
	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
)

// Store is what the handlers read and change of the suppression list.
type Store interface {
	ListSuppressions(ctx context.Context, accountID string, f suppressiondb.SuppressionFilter, p pg.Page) ([]suppressiondb.Suppression, *pg.Cursor, error)
	AddSuppressionBy(ctx context.Context, accountID, address string, medium invite.Medium,
		reason invite.SuppressionReason, by string) (sup suppressiondb.Suppression, created bool, err error)
	LiftSuppression(ctx context.Context, accountID, address, by string, customerConsent bool) error
	SuppressionHistory(ctx context.Context, accountID, address string, p pg.Page) ([]suppressiondb.SuppressionChange, *pg.Cursor, error)
}

// Handler serves the routes of the suppression list. Its methods are the
// handlers of the routes the API mounts.
type Handler struct {
	api   apiwire.API
	store Store
}

// New builds the handlers on the API that mounts them and on st.
func New(api apiwire.API, st Store) *Handler { return &Handler{api: api, store: st} }

// suppressionJSON is an entry of the suppression list.
type suppressionJSON struct {
	Address   string                   `json:"address"`
	Medium    invite.Medium            `json:"medium"`
	Reason    invite.SuppressionReason `json:"reason"`
	By        string                   `json:"by"`
	CreatedAt apiwire.Timestamp        `json:"createdAt"`
}

func suppressionOut(x suppressiondb.Suppression) suppressionJSON {
	return suppressionJSON{Address: x.Address, Medium: x.Medium, Reason: x.Reason, By: x.By, CreatedAt: apiwire.Timestamp(x.CreatedAt)}
}

// suppressionChangeJSON is a line of an address's history on the list.
type suppressionChangeJSON struct {
	Action string                   `json:"action"`
	Reason invite.SuppressionReason `json:"reason"`
	By     string                   `json:"by"`
	At     apiwire.Timestamp        `json:"at"`
}

func suppressionChangeOut(c suppressiondb.SuppressionChange) suppressionChangeJSON {
	return suppressionChangeJSON{Action: c.Action, Reason: c.Reason, By: c.By, At: apiwire.Timestamp(c.At)}
}

// consentToLift is the value of DELETE /suppressions/{address}?confirm=
// that lifts an entry the customer made themselves.
const consentToLift = "customer-consent"

// suppressionIn is POST /suppressions.
type suppressionIn struct {
	Address string                    `json:"address" required:"true"`
	Reason  *invite.SuppressionReason `json:"reason"`
}

// normalizeAddress is contact.Normalize with its problem as a message
// ("" when there is none).
func normalizeAddress(raw string) (address string, medium invite.Medium, problem string) {
	address, medium, err := contact.Normalize(raw)
	if err != nil {
		return "", "", err.Error()
	}
	return address, medium, ""
}

func (h *Handler) List(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "reason", "address")
	f := suppressiondb.SuppressionFilter{Reason: invite.SuppressionReason(q.Get("reason"))}
	if f.Reason != "" {
		if msg := apiwire.OneOf(f.Reason, invite.SuppressionReasons()...); msg != "" {
			q.Fail("reason", msg)
		}
	}
	if v := q.Get("address"); v != "" {
		addr, _, msg := normalizeAddress(v)
		if msg != "" {
			q.Fail("address", msg)
		}
		f.Address = addr
	}
	p := q.PageOf(func(id string) bool { _, _, msg := normalizeAddress(id); return msg == "" })
	if err := q.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	xs, next, err := h.store.ListSuppressions(r.Context(), h.api.AccountID(r), f, p)
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(xs, next, suppressionOut))
}

// Create puts an address on the list: 201, or 200 with the
// entry unchanged when it is there already.
func (h *Handler) Create(w http.ResponseWriter, r *http.Request) {
	var in suppressionIn
	if err := h.api.DecodeJSON(w, r, &in); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	var errs apiwire.Invalid
	addr, medium, msg := normalizeAddress(in.Address)
	errs.Check("address", msg)
	reason := invite.Manual
	if in.Reason != nil {
		reason = *in.Reason
		errs.Check("reason", apiwire.OneOf(reason, invite.SuppressionReasons()...))
	}
	if err := errs.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	x, created, err := h.store.AddSuppressionBy(r.Context(), h.api.AccountID(r), addr, medium, reason, h.api.ClientID(r))
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", "/suppressions/"+url.PathEscape(x.Address))
	}
	apiwire.WriteJSON(w, status, suppressionOut(x))
}

// suppressionAddress reads the {address} path segment, once q, the
// request's query, has been found good: percent-escaped or literal;
// emails match case-insensitively. An address that cannot be one is not
// on any list: 404. It answers the request itself when it reports false.
func (h *Handler) suppressionAddress(w http.ResponseWriter, r *http.Request, q *apiquery.Query) (string, bool) {
	if err := q.Err(); err != nil {
		h.api.Fail(w, r, err)
		return "", false
	}
	addr, _, msg := normalizeAddress(mux.Vars(r)["address"])
	if msg != "" {
		h.api.Fail(w, r, apiwire.Errorf(http.StatusNotFound, "suppression not found"))
		return "", false
	}
	return addr, true
}

// Delete lifts a suppression: 204, or 404 when there is none.
// An unsubscribe or a spam complaint is the customer's own wish: lifting
// it needs ?confirm=customer-consent, the client's statement that the
// customer asked to hear from the shop again (409 without it).
func (h *Handler) Delete(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "confirm")
	confirm := q.Get("confirm")
	if confirm != "" && confirm != consentToLift {
		q.Fail("confirm", "must be "+consentToLift)
	}
	addr, ok := h.suppressionAddress(w, r, q)
	if !ok {
		return
	}
	err := h.store.LiftSuppression(r.Context(), h.api.AccountID(r), addr, h.api.ClientID(r), confirm == consentToLift)
	switch {
	case errors.Is(err, pg.ErrNotFound):
		h.api.Fail(w, r, apiwire.Errorf(http.StatusNotFound, "suppression not found"))
	case errors.Is(err, suppressiondb.ErrConsentNeeded):
		h.api.Fail(w, r, apiwire.Errorf(http.StatusConflict, "the customer unsubscribed or complained: lift it only when they "+
			"asked to hear from you again, with ?confirm="+consentToLift))
	case err != nil:
		h.api.Fail(w, r, err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// History is GET /suppressions/{address}/history: every time
// the address was put on the list or lifted, newest first; 404 when it
// never was.
func (h *Handler) History(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r)
	p := q.PageOf(func(id string) bool { n, err := strconv.ParseInt(id, 10, 64); return err == nil && n > 0 })
	addr, ok := h.suppressionAddress(w, r, q)
	if !ok {
		return
	}
	cs, next, err := h.store.SuppressionHistory(r.Context(), h.api.AccountID(r), addr, p)
	if errors.Is(err, pg.ErrNotFound) {
		h.api.Fail(w, r, apiwire.Errorf(http.StatusNotFound, "address never suppressed"))
		return
	}
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(cs, next, suppressionChangeOut))
}
