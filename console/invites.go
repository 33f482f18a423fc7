package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/contact"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/reportdb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/workflows"
)

// invitePages are the pages of the invites: the list, an invite with its history, cancel and retry.
type invitePages struct{ *Handler }

// Invites, for support staff: find a customer's invite by their email
// address, the order's reference or the event's id, and see everything
// that became of it — its attempts with the mail provider's reports, its
// reminder, the address's suppression with its history — and the
// workflow that carries it, in the Temporal Web UI. What may be cancelled
// or retried is package invite's rule, decided by the store under the
// invite's lock.

type invitesView struct {
	Query   string
	Kind    string // "email", "reference" or "event": what the query was read as
	Error   string
	Invites []inviteRow
	Next    string
}

// inviteRow is one invite of a list.
type inviteRow struct {
	invitedb.Event
	Customer customer
}

// customer is what the event says of its customer and order.
type customer struct {
	Email, FirstName, LastName, Mobile, Reference string
	Order                                         string // the order's reference
}

// customerOf reads the customer from the event's payload as it was
// accepted (an erased one holds nothing).
func customerOf(e invitedb.Event) customer {
	var p struct {
		Customer struct {
			Email     string `json:"email"`
			FirstName string `json:"firstName"`
			LastName  string `json:"lastName"`
			Mobile    string `json:"mobile"`
			Reference string `json:"reference"`
		} `json:"customer"`
		Transaction struct {
			Reference string `json:"reference"`
		} `json:"transaction"`
	}
	_ = json.Unmarshal(e.Payload, &p) // an event the API accepted always decodes; one that does not shows empty
	c := p.Customer
	return customer{Email: c.Email, FirstName: c.FirstName, LastName: c.LastName, Mobile: c.Mobile, Reference: c.Reference,
		Order: p.Transaction.Reference}
}

func (h invitePages) invites(w http.ResponseWriter, r *http.Request, p Person) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	v := invitesView{Query: q}
	t := h.translator(r)
	page, ok := readPage(r.URL.Query())
	if !ok {
		h.notFound(w, r)
		return
	}
	var f invitedb.EventFilter
	switch {
	case q == "":
		h.render(w, r, http.StatusOK, "invites", "invites_title", "invites", v)
		return
	case store.ValidID("evt", q):
		v.Kind = "event"
		e, err := h.opts.Invites.Event(r.Context(), p.AccountID, q)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			h.fail(w, r, err)
			return
		default:
			v.Invites = []inviteRow{{Event: e, Customer: customerOf(e)}}
		}
		h.render(w, r, http.StatusOK, "invites", "invites_title", "invites", v)
		return
	case strings.Contains(q, "@"):
		v.Kind = "email"
		addr, medium, err := contact.Normalize(q)
		if err != nil || medium != invite.Email {
			v.Error = t("error_email")
			h.render(w, r, http.StatusBadRequest, "invites", "invites_title", "invites", v)
			return
		}
		f.CustomerEmail = addr
	default:
		v.Kind = "reference"
		f.TransactionReference = q
	}
	es, next, err := h.opts.Invites.ListEvents(r.Context(), p.AccountID, f, page)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for _, e := range es {
		v.Invites = append(v.Invites, inviteRow{Event: e, Customer: customerOf(e)})
	}
	if next != nil {
		v.Next = strings.TrimSuffix(Prefix, "/") + "/invites?" + url.Values{"q": {q}, "cursor": {next.Encode()}}.Encode()
	}
	h.render(w, r, http.StatusOK, "invites", "invites_title", "invites", v)
}

type inviteView struct {
	Event       invitedb.Event
	Status      invite.Status // as the API shows it
	Customer    customer
	Attempts    []invitedb.Attempt
	Delivery    map[string]*reportdb.MailDelivery // by message: invite, reminder
	Review      *reviewLink
	Suppression *suppressiondb.Suppression
	History     []suppressionRow
	WorkflowURL string
	Error       string // why a cancel or retry was refused
	CanCancel   bool
	CanRetry    bool
}

// reviewLink is the event's review, as the event row has it.
type reviewLink struct {
	ID        string    `json:"id"`
	Rating    *int      `json:"rating"`
	CreatedAt time.Time `json:"createdAt"`
}

// suppressionRow is a change of an address on the list, with who made
// it.
type suppressionRow struct {
	suppressiondb.SuppressionChange
	Who string
}

func (h invitePages) loadInvite(w http.ResponseWriter, r *http.Request, p Person) (inviteView, bool) {
	id := r.PathValue("id")
	if !store.ValidID("evt", id) {
		h.notFound(w, r)
		return inviteView{}, false
	}
	e, err := h.opts.Invites.Event(r.Context(), p.AccountID, id)
	if err != nil {
		h.fail(w, r, notFound(err))
		return inviteView{}, false
	}
	v := inviteView{Event: e, Status: e.InviteStatus.API(), Customer: customerOf(e)}
	// The buttons are offered when the invite's rules would let them do
	// something (the store decides again, under the invite's lock).
	inv, rem := invite.State{Status: e.InviteStatus}, invite.State{Status: invite.Status(e.ReminderStatus.String)}
	if c, err := invite.CancelWaiting(inv, rem); err == nil && c.From.Status != c.To.Status {
		v.CanCancel = h.opts.Allows(p.Role, CancelInvite)
	}
	if _, err := invite.Retry(inv); err == nil {
		v.CanRetry = h.opts.Allows(p.Role, RetryInvite)
	}
	if v.Attempts, err = e.History(); err != nil {
		h.fail(w, r, err)
		return inviteView{}, false
	}
	if len(e.MailDelivery) > 0 {
		if err := json.Unmarshal(e.MailDelivery, &v.Delivery); err != nil {
			h.fail(w, r, fmt.Errorf("event %s: mail delivery: %w", e.ID, err))
			return inviteView{}, false
		}
	}
	if len(e.Review) > 0 {
		v.Review = &reviewLink{}
		if err := json.Unmarshal(e.Review, v.Review); err != nil {
			h.fail(w, r, fmt.Errorf("event %s: review: %w", e.ID, err))
			return inviteView{}, false
		}
	}
	if h.opts.TemporalUIURL != "" {
		v.WorkflowURL = strings.TrimRight(h.opts.TemporalUIURL, "/") + "/namespaces/" + url.PathEscape(h.opts.Namespace) +
			"/workflows/" + url.PathEscape(workflows.WorkflowID(e.ID))
	}
	address := v.Customer.Email
	if e.InviteMedium.String == string(invite.SMS) || (address == "" && v.Customer.Mobile != "") {
		address = v.Customer.Mobile
	}
	if address != "" {
		if addr, _, err := contact.Normalize(address); err == nil {
			if v.Suppression, v.History, err = h.suppressionOf(r, p, addr); err != nil {
				h.fail(w, r, err)
				return inviteView{}, false
			}
		}
	}
	return v, true
}

// suppressionOf reads an address's entry on the account's list (nil when
// it is not listed) and its history (empty when it never was).
func (h *Handler) suppressionOf(r *http.Request, p Person, address string) (*suppressiondb.Suppression, []suppressionRow, error) {
	var sup *suppressiondb.Suppression
	x, err := h.opts.Suppressions.Suppression(r.Context(), p.AccountID, address)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, nil, err
	default:
		sup = &x
	}
	hs, _, err := h.opts.Suppressions.SuppressionHistory(r.Context(), p.AccountID, address, store.Page{Limit: 50})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, nil, err
	}
	actors := make([]string, len(hs))
	for i, c := range hs {
		actors[i] = c.By
	}
	names := h.actorNames(r, p, actors)
	rows := make([]suppressionRow, len(hs))
	for i, c := range hs {
		rows[i] = suppressionRow{SuppressionChange: c, Who: names[c.By]}
	}
	return sup, rows, nil
}

func (h invitePages) invitePage(w http.ResponseWriter, r *http.Request, p Person) {
	v, ok := h.loadInvite(w, r, p)
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, "invite", "invite_title", "invites", v)
}

// cancelInvite cancels a waiting invite, or the reminder of a sent one.
func (h invitePages) cancelInvite(w http.ResponseWriter, r *http.Request, p Person) {
	h.changeInvite(w, r, p, "cancel", h.opts.Invites.CancelInvite, h.opts.Cancelled)
}

// retryInvite sends a failed invite again: a new run of its workflow.
func (h invitePages) retryInvite(w http.ResponseWriter, r *http.Request, p Person) {
	var after func(string)
	if h.opts.Retried != nil {
		after = func(string) { h.opts.Retried() }
	}
	h.changeInvite(w, r, p, "retry", h.opts.Invites.RetryInvite, after)
}

func (h invitePages) changeInvite(w http.ResponseWriter, r *http.Request, p Person, verb string,
	change func(ctx context.Context, accountID, id string) (invitedb.Event, error), after func(eventID string)) {
	id := r.PathValue("id")
	if !store.ValidID("evt", id) {
		h.notFound(w, r)
		return
	}
	_, err := change(r.Context(), p.AccountID, id)
	if errors.Is(err, invitedb.ErrInviteState) {
		v, ok := h.loadInvite(w, r, p)
		if !ok {
			return
		}
		t := h.translator(r)
		if v.Event.InviteStatus == invite.Sending {
			v.Error = t("invite_refused_sending_" + verb)
		} else {
			v.Error = t("invite_refused_"+verb, "status", t("invite_status_"+string(v.Status)))
		}
		h.render(w, r, http.StatusConflict, "invite", "invite_title", "invites", v)
		return
	}
	if err != nil {
		h.fail(w, r, notFound(err))
		return
	}
	if after != nil {
		after(id)
	}
	h.seeOther(w, r, "/invites/"+id, "invite_"+verb)
}
