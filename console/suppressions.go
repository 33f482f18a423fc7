package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/touchpoint/touchpoint/contact"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/text"
)

// suppressionPages are the pages of the suppression list.
type suppressionPages struct{ *Handler }

// The suppression list: who gets no invite, why, and who put them there
// or took them off. An address a customer asked to leave (unsubscribed,
// complained) is lifted only with the customer's consent: the store's
// rule, which the form states.

type suppressionsView struct {
	Address, Reason string // the search, as typed
	Errors          fieldErrors
	List            []suppressiondb.Suppression
	Next            string
	Reasons         []invite.SuppressionReason
	// One address looked up: its entry (nil when not listed) and history.
	Found   bool
	Entry   *suppressiondb.Suppression
	History []suppressionRow
	// NeedsConsent: lifting the entry needs the customer's consent.
	NeedsConsent bool
	// The add form, as typed when refused.
	AddAddress, AddReason string
	AddErrors             fieldErrors
	LiftError             string
	CanAdd, CanLift       bool
}

func (h suppressionPages) suppressions(w http.ResponseWriter, r *http.Request, p Person) {
	v, status, ok := h.suppressionsView(w, r, p, r.URL.Query().Get("address"), r.URL.Query().Get("reason"))
	if !ok {
		return
	}
	h.render(w, r, status, "suppressions", "suppressions_title", "suppressions", v)
}

// suppressionsView reads the list, or the one address searched for.
func (h suppressionPages) suppressionsView(w http.ResponseWriter, r *http.Request, p Person, address, reason string) (suppressionsView, int, bool) {
	t := h.translator(r)
	v := suppressionsView{Address: address, Reason: reason, Reasons: invite.SuppressionReasons(), AddReason: string(invite.Manual),
		CanAdd: h.opts.Allows(p.Role, Suppress), CanLift: h.opts.Allows(p.Role, Unsuppress)}
	var f suppressiondb.SuppressionFilter
	if reason != "" {
		f.Reason = invite.SuppressionReason(reason)
		if !f.Reason.Valid() {
			v.Errors.add("reason", t("error_choice"))
		}
	}
	if strings.TrimSpace(address) != "" {
		addr, _, err := contact.Normalize(address)
		if err != nil {
			v.Errors.add("address", h.addressError(r, err))
		}
		f.Address = addr
	}
	if len(v.Errors) > 0 {
		return v, http.StatusBadRequest, true
	}
	if f.Address != "" {
		entry, hist, err := h.suppressionOf(r, p, f.Address)
		if err != nil {
			h.fail(w, r, err)
			return v, 0, false
		}
		v.Found, v.Entry, v.History = true, entry, hist
		v.NeedsConsent = entry != nil && entry.Reason.CustomersWish()
		return v, http.StatusOK, true
	}
	page, ok := readPage(r.URL.Query())
	if !ok {
		h.notFound(w, r)
		return v, 0, false
	}
	list, next, err := h.opts.Suppressions.ListSuppressions(r.Context(), p.AccountID, f, page)
	if err != nil {
		h.fail(w, r, err)
		return v, 0, false
	}
	v.List = list
	if next != nil {
		q := url.Values{"cursor": {next.Encode()}}
		if reason != "" {
			q.Set("reason", reason)
		}
		v.Next = strings.TrimSuffix(Prefix, "/") + "/suppressions?" + q.Encode()
	}
	return v, http.StatusOK, true
}

// addressError words contact.Normalize's error in the reader's language.
func (h suppressionPages) addressError(r *http.Request, err error) string {
	t := h.translator(r)
	var te *text.Error
	switch {
	case errors.Is(err, contact.ErrRequired):
		return t("error_required")
	case errors.Is(err, contact.ErrTooLong):
		return t("error_too_long", "max", contact.MaxAddress)
	case errors.As(err, &te):
		return t("error_characters")
	}
	return t("error_address")
}

// addSuppression puts an address on the list by hand.
func (h suppressionPages) addSuppression(w http.ResponseWriter, r *http.Request, p Person) {
	raw, reason := r.PostForm.Get("address"), invite.SuppressionReason(r.PostForm.Get("reason"))
	var errs fieldErrors
	addr, medium, err := contact.Normalize(raw)
	if err != nil {
		errs.add("add-address", h.addressError(r, err))
	}
	if !reason.Valid() {
		errs.add("add-reason", h.translator(r)("error_choice"))
	}
	if len(errs) > 0 {
		v, _, ok := h.suppressionsView(w, r, p, "", "")
		if !ok {
			return
		}
		v.AddAddress, v.AddReason, v.AddErrors = raw, string(reason), errs
		h.render(w, r, http.StatusBadRequest, "suppressions", "suppressions_title", "suppressions", v)
		return
	}
	if _, _, err := h.opts.Suppressions.AddSuppressionBy(r.Context(), p.AccountID, addr, medium, reason, p.ID); err != nil {
		h.fail(w, r, err)
		return
	}
	h.seeOther(w, r, "/suppressions?"+url.Values{"address": {addr}}.Encode(), "suppressed")
}

// consentValue is the checkbox by which a person states that the customer
// asked to hear from the shop again (the API's ?confirm= value).
const consentValue = "customer-consent"

// liftSuppression takes an address off the list; an entry that records
// the customer's own wish needs the consent box ticked.
func (h suppressionPages) liftSuppression(w http.ResponseWriter, r *http.Request, p Person) {
	addr, _, err := contact.Normalize(r.PostForm.Get("address"))
	if err != nil {
		h.notFound(w, r)
		return
	}
	err = h.opts.Suppressions.LiftSuppression(r.Context(), p.AccountID, addr, p.ID, r.PostForm.Get("consent") == consentValue)
	if errors.Is(err, suppressiondb.ErrConsentNeeded) {
		v, _, ok := h.suppressionsView(w, r, p, addr, "")
		if !ok {
			return
		}
		v.LiftError = h.translator(r)("error_consent")
		h.render(w, r, http.StatusBadRequest, "suppressions", "suppressions_title", "suppressions", v)
		return
	}
	if err != nil {
		h.fail(w, r, notFound(err))
		return
	}
	h.seeOther(w, r, "/suppressions?"+url.Values{"address": {addr}}.Encode(), "lifted")
}
