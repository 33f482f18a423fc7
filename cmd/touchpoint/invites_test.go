package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ops find a failed invite with `invites show` and re-send failed ones in
// bulk with `invites retry --failed`; a dry run changes nothing.
func TestInvitesShowAndRetryCLI(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	c := s.client()
	s.eventType(c, "checkout")
	vars := map[string]string{"DATABASE_URL": s.cfg.DatabaseURL, "TEMPORAL_ADDRESS": s.cfg.TemporalAddress}

	// The mail server refuses both messages for good. (A refused address
	// would be suppressed, and its retry skipped: that is tested in store.)
	s.smtp.FailDATA(2, 554)
	refs := []string{s.accept(c, s.event("checkout", "a@example.com")), s.accept(c, s.event("checkout", "b@example.com"))}
	s.waitStatus(c, "failed", refs...)
	for _, ref := range refs {
		assert.Equal(t, "Failed", s.waitClosed(ref), "a failed invite fails its workflow")
	}

	out, err := runCLI(t, vars, "invites", "show", refs[0], "--json")
	require.NoError(t, err)
	var shown struct {
		ID       string
		Invite   []map[string]any
		Workflow struct {
			Status string
			Query  struct{ Status, Reason string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &shown), out)
	assert.Equal(t, refs[0], shown.ID)
	assert.Contains(t, shown.Invite, map[string]any{"status": "failed"})
	assert.Contains(t, shown.Invite, map[string]any{"reason": "rejected"})
	assert.Equal(t, "Failed", shown.Workflow.Status)
	assert.Equal(t, "failed", shown.Workflow.Query.Status)

	out, err = runCLI(t, vars, "invites", "retry", "--failed", "--since", "1h", "--dry-run")
	require.NoError(t, err)
	assert.Contains(t, out, "2 failed invites would be retried")
	_, ev := c.do(http.MethodGet, "/events/"+refs[0], nil)
	assert.Equal(t, "failed", inviteOf(ev)["status"], "a dry run changes nothing")

	out, err = runCLI(t, vars, "invites", "retry", "--failed", "--since", "1h")
	require.NoError(t, err)
	assert.Contains(t, out, "done: 2 retried")
	s.waitStatus(c, "sent", refs...)
	mails := s.mailsByEvent()
	for _, ref := range refs {
		assert.Equal(t, 1, mails[ref], ref)
	}

	// Running it again finds nothing left to do; a sent invite is not retried.
	out, err = runCLI(t, vars, "invites", "retry", "--failed", "--since", "1h")
	require.NoError(t, err)
	assert.Contains(t, out, "done: 0 retried")
	_, err = runCLI(t, vars, "invites", "retry", refs[0])
	assert.ErrorContains(t, err, "has not failed")
	_, err = runCLI(t, vars, "invites", "retry", "evt-nope")
	assert.Error(t, err)
}
