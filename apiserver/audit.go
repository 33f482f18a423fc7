package apiserver

import (
	"context"
	"net/http"

	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/persondb"
)

// accountAPI is the routes of an account's audit trail and of its
// customers' erasure.
type accountAPI struct{ *server }

// AuditTrail is what GET /audit reads: an account's trail of who did what.
type AuditTrail interface {
	Audit(ctx context.Context, accountID string, f persondb.AuditFilter, p store.Page) ([]persondb.Entry, *store.Cursor, error)
}

// auditJSON is a line of the audit trail.
type auditJSON struct {
	ID         string            `json:"id"`
	Actor      string            `json:"actor"`
	ActorEmail *string           `json:"actorEmail"`
	Action     string            `json:"action"`
	Target     *string           `json:"target"`
	Detail     map[string]string `json:"detail"`
	At         apiwire.Timestamp `json:"at"`
}

func auditOut(e persondb.Entry) auditJSON {
	out := auditJSON{ID: e.ID, Actor: string(e.Actor), Action: e.Action, Detail: e.Detail, At: apiwire.Timestamp(e.CreatedAt)}
	if e.ActorEmail != "" {
		out.ActorEmail = &e.ActorEmail
	}
	if e.Target != "" {
		out.Target = &e.Target
	}
	if out.Detail == nil {
		out.Detail = map[string]string{}
	}
	return out
}

func (s accountAPI) listAudit(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "from", "to", "actor")
	f := persondb.AuditFilter{From: q.Time("from"), To: q.Time("to"), Actor: people.Actor(q.Get("actor"))}
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		q.Fail("to", "must be after from")
	}
	if a := f.Actor; a != "" && a != people.Operator && !store.ValidID(people.IDPrefix, string(a)) && !store.ValidID(people.ClientPrefix, string(a)) {
		q.Fail("actor", "must be a person's id (usr-…), an API client's id (cli-…) or operator")
	}
	p := q.Page(persondb.AuditPrefix)
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	rows, next, err := s.audit.Audit(r.Context(), accountID(r), f, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(rows, next, auditOut))
}
