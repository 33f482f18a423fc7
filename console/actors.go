package console

import (
	"context"
	"net/http"
	"strings"
)

// Directory names the people of an account: who did what, in the
// histories. Optional: without it a person shows as their id.
type Directory interface {
	// Emails maps the ids of people of the account to their addresses
	// (an erased person is left out).
	Emails(ctx context.Context, accountID string, ids []string) (map[string]string, error)
}

// actorNames words who made each change of a history: a person by their
// address, the customer, the operator, or an API client by its id.
func (h *Handler) actorNames(r *http.Request, p Person, actors []string) map[string]string {
	t := h.translator(r)
	out := map[string]string{}
	var people []string
	for _, a := range actors {
		switch {
		case a == "customer" || a == "operator" || a == "provider":
			out[a] = t("actor_" + a)
		case strings.HasPrefix(a, "usr-"):
			out[a] = a
			people = append(people, a)
		default:
			out[a] = t("actor_client", "id", a)
		}
	}
	if len(people) > 0 && h.opts.People != nil {
		// A name that cannot be read shows as the id: the history is
		// still true.
		if emails, err := h.opts.People.Emails(r.Context(), p.AccountID, people); err == nil {
			for id, e := range emails {
				out[id] = e
			}
		} else {
			h.log.WarnContext(r.Context(), "console: names of people", "error", err.Error())
		}
	}
	return out
}

// translator is the texts of the reader's language, for messages made in
// a handler (a form's errors).
func (h *Handler) translator(r *http.Request) func(key string, pairs ...any) string {
	p, _ := personFrom(r.Context())
	d := page{texts: h.views.Texts[h.views.Language(p.Language, r)]}
	return func(key string, pairs ...any) string {
		s, err := d.T(key, pairs...)
		if err != nil {
			return key
		}
		return s
	}
}
