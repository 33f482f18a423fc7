package apiserver

import (
	"net/http"
	"net/mail"

	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/store"
)

// eraseIn is POST /customers/erase: the customer, by exactly one of the
// email address of their events or the client's customer reference.
type eraseIn struct {
	Email     *string `json:"email"`
	Reference *string `json:"reference"`
}

// erasureOut says what an erasure did.
type erasureOut struct {
	Events             int `json:"events"`
	InvitesCancelled   int `json:"invitesCancelled"`
	RemindersCancelled int `json:"remindersCancelled"`
	InvitesInFlight    int `json:"invitesInFlight"`
	ReviewsKept        int `json:"reviewsKept"`
	SuppressionsKept   int `json:"suppressionsKept"`
}

// eraseCustomer honours a customer's erasure request in one call: their
// pending invites and reminders are cancelled (decided in PostgreSQL like
// the API's cancel, then their workflows are told), their personal data
// leaves their events, and reviews and suppressions are kept (see
// store.EraseCustomer). The address is never logged.
func (s accountAPI) eraseCustomer(w http.ResponseWriter, r *http.Request) {
	var in eraseIn
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	var key store.CustomerKey
	var errs apiwire.Invalid
	switch {
	case in.Email == nil && in.Reference == nil:
		errs.Check("email", "name the customer by email or by reference")
	case in.Email != nil && in.Reference != nil:
		errs.Check("reference", "name the customer by email or by reference, not both")
	case in.Email != nil:
		key.Email = *in.Email
		if a, err := mail.ParseAddress(key.Email); err != nil || a.Address != key.Email || len(key.Email) > maxEmail {
			errs.Check("email", "must be an email address such as ann@example.com")
		}
	default:
		key.Reference = *in.Reference
		switch {
		case key.Reference == "":
			errs.Check("reference", "is required")
		case len(key.Reference) > maxText:
			errs.Check("reference", "must be at most 1024 bytes")
		}
	}
	if err := errs.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	e, err := s.erasure.EraseCustomer(r.Context(), accountID(r), key)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, id := range e.Cancelled {
		s.signalCancel(id)
	}
	apiwire.WriteJSON(w, http.StatusOK, erasureOut{Events: e.Events, InvitesCancelled: e.InvitesCancelled,
		RemindersCancelled: e.RemindersCancelled, InvitesInFlight: e.InvitesInFlight,
		ReviewsKept: e.ReviewsKept, SuppressionsKept: e.SuppressionsKept})
}
