package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/console"
	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/persondb"
)

// sentInvite is an event whose invite went out by email in two attempts
// (the first failed and was retried), which the provider then reported
// bounced; the address is on the suppression list for it.
func (s *site) sentInvite(t *testing.T, a *eventfixture.Account, email string) string {
	t.Helper()
	sent := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	id := a.Event(t, eventfixture.Event{Email: email, FirstName: "Greta", Status: invite.Sent, SentAt: sent})
	for _, q := range []string{
		`INSERT INTO send_attempts (event_id, kind, n, medium, started_at, finished_at, outcome, detail, event_received_at)
		 SELECT $1, 'invite', 1, 'email', $2, $2, 'transient', '421 try again later', received_at FROM events WHERE id = $1`,
		`INSERT INTO send_attempts (event_id, kind, n, medium, started_at, finished_at, outcome, event_received_at)
		 SELECT $1, 'invite', 2, 'email', $2, $2, 'sent', received_at FROM events WHERE id = $1`,
		`INSERT INTO mail_events (provider, provider_id, event_id, account_id, message, attempt, outcome, detail, occurred_at, received_at,
		 event_received_at)
		 SELECT 'postmark', 'pm-' || $1, $1, account_id, 'invite', 2, 'bounced', '550 mailbox unavailable', $2, $2, received_at
		 FROM events WHERE id = $1`,
		`INSERT INTO mail_deliveries (event_id, message, status, provider, at, updated_at, event_received_at)
		 SELECT $1, 'invite', 'bounced', 'postmark', $2, $2, received_at FROM events WHERE id = $1`,
	} {
		_, err := s.db.Exec(q, id, sent)
		require.NoError(t, err)
	}
	_, _, err := s.st.Suppressions.AddSuppression(context.Background(), a.AccountID, strings.ToLower(email), invite.Email, invite.Bounced, id)
	require.NoError(t, err)
	return id
}

// TestInvites: support finds a customer's invite by email address, order
// reference or event id — never another account's — and its page shows
// the status and reason, every attempt with the provider's reports, the
// reminder, the address's suppression with its history, and links to the
// workflow in the Temporal Web UI.
func TestInvites(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *console.Options) {
		o.TemporalUIURL, o.Namespace = "http://temporal.example:8233/", "touchpoint"
	})
	id := s.sentInvite(t, s.a, "Greta@Example.com")
	other := s.a.Event(t, eventfixture.Event{Email: "someone@example.com"})
	foreign := s.b.Event(t, eventfixture.Event{Email: "greta@example.com"})
	var order string
	require.NoError(t, s.db.Get(&order, `SELECT transaction_reference FROM events WHERE id = $1`, id))

	found := func(a answer) []string {
		var out []string
		for _, l := range a.elements(func(n *htmlNode) bool {
			return n.Data == "a" && strings.HasPrefix(attr(n, "href"), "/console/invites/evt-")
		}) {
			out = append(out, strings.TrimPrefix(attr(l, "href"), "/console/invites/"))
		}
		return out
	}
	for _, q := range []string{"greta@example.com", " GRETA@example.COM ", order, id} {
		p := s.get(t, viewerA, "/console/invites?q="+url.QueryEscape(q))
		require.Equal(t, http.StatusOK, p.status, q)
		assert.Equal(t, []string{id}, found(p), q)
	}
	assert.Empty(t, found(s.get(t, viewerA, "/console/invites?q="+foreign)), "another account's event is not found")
	assert.Empty(t, found(s.get(t, viewerA, "/console/invites?q=nobody@example.com")))
	bad := s.get(t, viewerA, "/console/invites?q="+url.QueryEscape("not an@address"))
	assert.Equal(t, http.StatusBadRequest, bad.status)
	assert.NotNil(t, bad.byID("q-error"))
	assert.Equal(t, []string{other}, found(s.get(t, viewerA, "/console/invites?q=someone@example.com")))

	p := s.get(t, viewerA, "/console/invites/"+id)
	require.Equal(t, http.StatusOK, p.status)
	what := text(p.byID("invite-h").Parent)
	assert.Contains(t, what, "Status sent")
	assert.Contains(t, what, "Greta@Example.com")
	assert.Contains(t, what, "Provider's report bounced (postmark")
	attempts := text(p.byID("attempts-h").Parent)
	assert.Contains(t, attempts, "Invite · attempt 1 failed, retried")
	assert.Contains(t, attempts, "421 try again later")
	assert.Contains(t, attempts, "Invite · attempt 2 sent")
	assert.Contains(t, attempts, "bounced — postmark")
	assert.Contains(t, attempts, "550 mailbox unavailable")
	sup := text(p.byID("suppression-h").Parent)
	assert.Contains(t, sup, "Suppressed mail to it bounced")
	assert.Contains(t, sup, "Added · mail to it bounced by the mail provider")
	assert.Contains(t, text(p.byID("reminder-h").Parent), "No reminder is planned.")
	wf := p.elements(func(n *htmlNode) bool { return n.Data == "a" && strings.Contains(attr(n, "href"), "temporal.example") })
	require.Len(t, wf, 1)
	assert.Equal(t, "http://temporal.example:8233/namespaces/touchpoint/workflows/"+id, attr(wf[0], "href"))
	assert.Empty(t, p.elements(func(n *htmlNode) bool {
		return n.Data == "form" && strings.HasPrefix(attr(n, "action"), "/console/invites/")
	}),
		"a viewer is offered no cancel or retry")

	for _, path := range []string{"/console/invites/" + foreign, "/console/invites/evt-00000000-0000-4000-8000-000000000000", "/console/invites/x"} {
		assert.Equal(t, http.StatusNotFound, s.get(t, viewerA, path).status, path)
	}
}

// TestCancelAndRetry: an editor cancels a waiting invite (its workflow
// is told) and retries a failed one (the starter is woken); what the
// invite's state does not allow is refused with the reason; a viewer may
// do neither; another account's invite is 404 and stays as it was.
func TestCancelAndRetry(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var cancelled []string
	retried := 0
	s := newSite(t, func(o *console.Options) {
		o.Cancelled = func(id string) { mu.Lock(); cancelled = append(cancelled, id); mu.Unlock() }
		o.Retried = func() { mu.Lock(); retried++; mu.Unlock() }
	})
	waiting := s.a.Event(t, eventfixture.Event{Status: invite.Pending})
	failed := s.a.Event(t, eventfixture.Event{Status: invite.Failed})
	sent := s.sentInvite(t, s.a, "greta@example.com")
	foreign := s.b.Event(t, eventfixture.Event{Status: invite.Pending})

	status := func(id string) invite.Status {
		var st invite.Status
		require.NoError(t, s.db.Get(&st, `SELECT invite_status FROM events WHERE id = $1`, id))
		return st
	}
	forms := func(person, id string) []string {
		var out []string
		for _, f := range s.get(t, person, "/console/invites/"+id).elements(func(n *htmlNode) bool {
			return n.Data == "form" && strings.HasPrefix(attr(n, "action"), "/console/invites/")
		}) {
			out = append(out, strings.TrimPrefix(attr(f, "action"), "/console/invites/"+id))
		}
		return out
	}
	assert.Equal(t, http.StatusForbidden, s.post(t, viewerA, "/console/invites/"+waiting+"/cancel", nil).status)
	assert.Equal(t, http.StatusForbidden, s.post(t, editorA, "/console/invites/"+waiting+"/cancel", url.Values{"csrf_token": {"x"}}).status)
	assert.Equal(t, invite.Pending, status(waiting))

	assert.Equal(t, []string{"/cancel"}, forms(editorA, waiting))
	res := s.post(t, editorA, "/console/invites/"+waiting+"/cancel", nil)
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	assert.Equal(t, invite.Cancelled, status(waiting))
	assert.Equal(t, []string{waiting}, cancelled)
	after := s.get(t, editorA, res.location())
	require.Equal(t, http.StatusOK, after.status, after.body)
	assert.Contains(t, text(after.byID("main")), "Cancelled. Nothing more is sent for this event.")

	assert.Empty(t, forms(editorA, sent), "a sent invite without a reminder offers neither")
	assert.Equal(t, []string{"/retry"}, forms(editorA, failed))
	assert.Empty(t, forms(viewerA, failed))
	res = s.post(t, editorA, "/console/invites/"+sent+"/cancel", nil)
	assert.Equal(t, http.StatusConflict, res.status)
	assert.Contains(t, text(res.elements(func(n *htmlNode) bool { return attr(n, "role") == "alert" })[0]), "The invite is sent; it cannot be cancelled.")
	res = s.post(t, editorA, "/console/invites/"+sent+"/retry", nil)
	assert.Equal(t, http.StatusConflict, res.status)

	require.Equal(t, http.StatusSeeOther, s.post(t, editorA, "/console/invites/"+failed+"/retry", nil).status)
	assert.Equal(t, invite.Pending, status(failed))
	assert.Equal(t, 1, retried)

	assert.Equal(t, http.StatusNotFound, s.post(t, ownerA, "/console/invites/"+foreign+"/cancel", nil).status)
	assert.Equal(t, invite.Pending, status(foreign))
	assert.Equal(t, []string{waiting}, cancelled)

	// The audit trail names the person for each change, and only the
	// changes made.
	trail, _, err := s.ps.Audit(context.Background(), s.a.AccountID, persondb.AuditFilter{Actor: people.PersonActor(editorA)}, store.Page{Limit: 10})
	require.NoError(t, err)
	var did []string
	for _, e := range trail {
		did = append(did, e.Action+" "+e.Target)
	}
	assert.Equal(t, []string{persondb.AuditInviteRetried + " " + failed, persondb.AuditInviteCancelled + " " + waiting}, did)
}
