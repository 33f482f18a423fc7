package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/freeport"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/storeset"
)

// opsCLI runs one touchpoint command in-process with vars as its
// environment and returns its stdout.
func opsCLI(t *testing.T, vars map[string]string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	env := &environment{stdout: &out, stderr: io.Discard, getenv: func(k string) string { return vars[k] },
		logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	err := run(context.Background(), env, args)
	return out.String(), err
}

// opsDatabase is a migrated database for the ops commands, the variables
// that point them at it (and at a Temporal that does not answer), and a
// pool on it for fixtures.
func opsDatabase(t *testing.T) (map[string]string, *sqlx.DB) {
	t.Helper()
	addrs, err := freeport.Addrs(1) // nobody listens there
	require.NoError(t, err)
	closed := addrs[0]
	vars := map[string]string{"DATABASE_URL": testdb.NewURL(t), "TEMPORAL_ADDRESS": closed}
	_, err = opsCLI(t, vars, "migrate", "--schema-only")
	require.NoError(t, err)
	db, err := store.Open(context.Background(), vars["DATABASE_URL"])
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return vars, db
}

// `invites retry --failed` with its filters: a dry run lists exactly what
// a run then retries; delivery_uncertain only with --include-uncertain.
func TestInvitesRetryFilters(t *testing.T) {
	t.Parallel()
	vars, db := opsDatabase(t)
	a, b := eventfixture.NewAccount(t, db, eventfixture.Setting{}), eventfixture.NewAccount(t, db, eventfixture.Setting{})
	failed := func(acc *eventfixture.Account, reason invite.Reason, ago string) string {
		t.Helper()
		id := acc.Event(t, eventfixture.Event{Status: invite.Failed})
		_, err := db.Exec(`UPDATE events SET invite_reason = $2, last_error = 'the server said no', updated_at = now() - $3::interval
			WHERE id = $1`, id, reason, ago)
		require.NoError(t, err)
		return id
	}
	rejected := failed(a, invite.Rejected, "1 hour")
	exhausted := failed(a, invite.RetriesExhausted, "1 hour")
	uncertain := failed(a, invite.DeliveryUncertain, "1 hour")
	otherChannel := failed(b, invite.Rejected, "1 hour")
	longAgo := failed(a, invite.Rejected, "3 days")
	status := func(id string) invite.Status {
		var s invite.Status
		require.NoError(t, db.Get(&s, `SELECT invite_status FROM events WHERE id = $1`, id))
		return s
	}
	listed := func(out string) []string {
		var ids []string
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "evt-") {
				ids = append(ids, f[0])
			}
		}
		return ids
	}

	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"default: the last 24h, without uncertain": {nil, []string{rejected, exhausted, otherChannel}},
		"reason":            {[]string{"--reason", "retries_exhausted"}, []string{exhausted}},
		"reasons":           {[]string{"--reason", "rejected, retries_exhausted", "--account", a.AccountID}, []string{rejected, exhausted}},
		"channel":           {[]string{"--channel", b.ChannelID}, []string{otherChannel}},
		"event type":        {[]string{"--event-type", a.EventTypeID}, []string{rejected, exhausted}},
		"since, as a time":  {[]string{"--since", "2000-01-01T00:00:00Z", "--reason", "rejected"}, []string{rejected, otherChannel, longAgo}},
		"until":             {[]string{"--since", "2000-01-01T00:00:00Z", "--until", "2h"}, []string{longAgo}},
		"include uncertain": {[]string{"--include-uncertain", "--account", a.AccountID}, []string{rejected, exhausted, uncertain}},
	} {
		out, err := opsCLI(t, vars, append([]string{"invites", "retry", "--failed", "--dry-run"}, tc.args...)...)
		require.NoError(t, err, name)
		assert.ElementsMatch(t, tc.want, listed(out), "%s\n%s", name, out)
		assert.Contains(t, out, "would be retried (dry run: nothing changed)", name)
	}
	out, err := opsCLI(t, vars, "invites", "retry", "--failed", "--dry-run")
	require.NoError(t, err)
	assert.Contains(t, out, "1 invites failed as delivery_uncertain match too and were left out")
	assert.Contains(t, out, "the server said no", "a dry run shows why each failed")
	assert.Equal(t, invite.Failed, status(rejected), "a dry run changes nothing")

	for _, bad := range [][]string{
		{"--reason", "delivery_uncertain"}, {"--reason", "nonsense"}, {"--channel", "ety-x"}, {"--since", "yesterday"},
		{"--since", "1h", "--until", "2h"},
	} {
		_, err := opsCLI(t, vars, append([]string{"invites", "retry", "--failed"}, bad...)...)
		assert.Error(t, err, "%v", bad)
	}

	out, err = opsCLI(t, vars, "invites", "retry", "--failed", "--reason", "rejected")
	require.NoError(t, err)
	assert.Contains(t, out, "done: 2 retried")
	for id, want := range map[string]invite.Status{rejected: invite.Pending, otherChannel: invite.Pending,
		exhausted: invite.Failed, uncertain: invite.Failed, longAgo: invite.Failed} {
		assert.Equal(t, want, status(id), id)
	}
	var orders int
	require.NoError(t, db.Get(&orders, `SELECT count(*) FROM outbox WHERE kind = 'retry' AND done_at IS NULL`))
	assert.Equal(t, 2, orders, "each retry orders a new run")

	// One by id: an uncertain one only on purpose.
	_, err = opsCLI(t, vars, "invites", "retry", uncertain)
	assert.ErrorContains(t, err, "--include-uncertain")
	assert.Equal(t, invite.Failed, status(uncertain))
	_, err = opsCLI(t, vars, "invites", "retry", uncertain, "--include-uncertain")
	require.NoError(t, err)
	assert.Equal(t, invite.Pending, status(uncertain))
}

// `invites show` lists the invite's attempts.
func TestInvitesShowAttempts(t *testing.T) {
	t.Parallel()
	vars, db := opsDatabase(t)
	st := storeset.New(db, "P7D")
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
	ctx := context.Background()
	c, err := st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send)
	_, err = st.Invites.FinishSend(ctx, invite.KindInvite, id, invite.SendResult{Retry: true, Error: "421 busy"})
	require.NoError(t, err)

	out, err := opsCLI(t, vars, "invites", "show", id, "--json")
	require.NoError(t, err)
	var shown struct {
		Attempts []invitedb.Attempt
		Workflow struct{ Error string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &shown), out)
	require.Len(t, shown.Attempts, 1)
	assert.Equal(t, invite.OutcomeTransient, shown.Attempts[0].Outcome)
	assert.Equal(t, "421 busy", shown.Attempts[0].Detail)
	assert.NotEmpty(t, shown.Workflow.Error, "Temporal does not answer here; the database state is shown anyway")

	out, err = opsCLI(t, vars, "invites", "show", id)
	require.NoError(t, err)
	assert.Regexp(t, `attempt\s+invite 1 \(email\) \S+: transient "421 busy"`, out)
}

// `customers erase` does what POST /customers/erase does.
func TestCustomersEraseCLI(t *testing.T) {
	t.Parallel()
	vars, db := opsDatabase(t)
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	scheduled := a.Event(t, eventfixture.Event{Email: "kim.doe@example.com", FirstName: "Kimberly", Status: invite.Scheduled})
	a.Event(t, eventfixture.Event{Email: "Kim.Doe@example.com", Status: invite.Sent})

	for _, bad := range [][]string{
		{"--account", a.AccountID},
		{"--account", a.AccountID, "--email", "kim.doe@example.com", "--reference", "R"},
		{"--email", "kim.doe@example.com"},
	} {
		_, err := opsCLI(t, vars, append([]string{"customers", "erase"}, bad...)...)
		assert.Error(t, err, "%v", bad)
	}

	out, err := opsCLI(t, vars, "customers", "erase", "--account", a.AccountID, "--email", "KIM.DOE@example.com", "--json")
	require.NoError(t, err)
	var got map[string]int
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.Equal(t, map[string]int{"events": 2, "invitesCancelled": 1, "remindersCancelled": 0, "invitesInFlight": 0,
		"reviewsKept": 0, "suppressionsKept": 0}, got)
	assert.Empty(t, testdb.Copies(t, db, "kim.doe@example.com"))
	assert.Empty(t, testdb.Copies(t, db, "Kimberly"))
	var s invite.Status
	require.NoError(t, db.Get(&s, `SELECT invite_status FROM events WHERE id = $1`, scheduled))
	assert.Equal(t, invite.Cancelled, s)

	out, err = opsCLI(t, vars, "customers", "erase", "--account", a.AccountID, "--email", "kim.doe@example.com")
	require.NoError(t, err)
	assert.Contains(t, out, "erased the customer's data from 0 events")
}
