package apiserver

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/touchpoint/touchpoint/contact"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
)

// suppressionAPI is the routes of the suppression list and the mail providers' reports.
type suppressionAPI struct{ *server }

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

// maxAddress is the longest address accepted: an email's path limit.
const maxAddress = contact.MaxAddress

// normalizeAddress is contact.Normalize with its problem as a message
// ("" when there is none).
func normalizeAddress(raw string) (address string, medium invite.Medium, problem string) {
	address, medium, err := contact.Normalize(raw)
	if err != nil {
		return "", "", err.Error()
	}
	return address, medium, ""
}

func (s suppressionAPI) listSuppressions(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r, "reason", "address")
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
		s.fail(w, r, err)
		return
	}
	xs, next, err := s.store.Suppressions.ListSuppressions(r.Context(), accountID(r), f, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(xs, next, suppressionOut))
}

// createSuppression puts an address on the list: 201, or 200 with the
// entry unchanged when it is there already.
func (s suppressionAPI) createSuppression(w http.ResponseWriter, r *http.Request) {
	var in suppressionIn
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
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
		s.fail(w, r, err)
		return
	}
	x, created, err := s.store.Suppressions.AddSuppressionBy(r.Context(), accountID(r), addr, medium, reason, clientID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", "/suppressions/"+url.PathEscape(x.Address))
	}
	apiwire.WriteJSON(w, status, suppressionOut(x))
}

// suppressionAddress reads the {address} path segment: percent-escaped or
// literal; emails match case-insensitively. An address that cannot be
// one is not on any list: 404.
func (s suppressionAPI) suppressionAddress(w http.ResponseWriter, r *http.Request) (string, bool) {
	addr, _, msg := normalizeAddress(mux.Vars(r)["address"])
	if msg != "" {
		s.fail(w, r, newError(http.StatusNotFound, "suppression not found"))
		return "", false
	}
	return addr, true
}

// deleteSuppression lifts a suppression: 204, or 404 when there is none.
// An unsubscribe or a spam complaint is the customer's own wish: lifting
// it needs ?confirm=customer-consent, the client's statement that the
// customer asked to hear from the shop again (409 without it).
func (s suppressionAPI) deleteSuppression(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r, "confirm")
	confirm := q.Get("confirm")
	if confirm != "" && confirm != consentToLift {
		q.Fail("confirm", "must be "+consentToLift)
	}
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	addr, ok := s.suppressionAddress(w, r)
	if !ok {
		return
	}
	err := s.store.Suppressions.LiftSuppression(r.Context(), accountID(r), addr, clientID(r), confirm == consentToLift)
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.fail(w, r, newError(http.StatusNotFound, "suppression not found"))
	case errors.Is(err, suppressiondb.ErrConsentNeeded):
		s.fail(w, r, newError(http.StatusConflict, "the customer unsubscribed or complained: lift it only when they "+
			"asked to hear from you again, with ?confirm="+consentToLift))
	case err != nil:
		s.fail(w, r, err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// suppressionHistory is GET /suppressions/{address}/history: every time
// the address was put on the list or lifted, newest first; 404 when it
// never was.
func (s suppressionAPI) suppressionHistory(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r)
	p := q.PageOf(func(id string) bool { n, err := strconv.ParseInt(id, 10, 64); return err == nil && n > 0 })
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	addr, ok := s.suppressionAddress(w, r)
	if !ok {
		return
	}
	cs, next, err := s.store.Suppressions.SuppressionHistory(r.Context(), accountID(r), addr, p)
	if errors.Is(err, store.ErrNotFound) {
		s.fail(w, r, newError(http.StatusNotFound, "address never suppressed"))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(cs, next, suppressionChangeOut))
}
