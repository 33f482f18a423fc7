package apiserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/workflows"
)

// signals records the workflow signals the API delivers.
type signals struct {
	mu  sync.Mutex
	got []string // "workflowID signal"
}

func (s *signals) SignalWorkflow(_ context.Context, workflowID, _, name string, _ any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, workflowID+" "+name)
	return nil
}

func (s *signals) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// withSignals serves the env's API again, now delivering workflow signals
// to rec, and returns an env that talks to it.
func (e *env) withSignals(t *testing.T, rec *signals) *env {
	t.Helper()
	api := apiserver.New(apiserver.Options{Events: e.store.Events, TemplateStore: e.store.Templates, Suppressions: e.store.Suppressions,
		Reports: e.store.Reports, Erasure: e.store, DB: e.store.DB(), Accounts: e.store.Accounts, Stats: e.store.Stats, Webhooks: e.store.Webhooks, Reviews: e.store.Reviews, Invites: e.store.Invites, Auth: e.verifier, Logger: e.logger(), Workflows: rec,
		FeedbackLinks: e.feedbackLinks, UnsubscribeLinks: e.unsubscribeLinks, SMS: testSMS(), WebhookSecrets: testWebhookSecrets(t),
		PublicationKeys: testPublicationKeys(t, e.store)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- api.Run(ctx) }()
	srv := httptest.NewServer(api)
	t.Cleanup(func() {
		srv.Close()
		cancel()
		assert.NoError(t, <-done)
	})
	other := *e
	other.srv = srv
	return &other
}

// One call erases a customer: pending invites cancelled and their
// workflows told, no copy of the address, names, mobile or reference left
// in any table but the suppression list, reviews kept, the events marked erased; the address is
// not logged; another customer is untouched.
func TestEraseCustomerThroughTheAPI(t *testing.T) {
	t.Parallel()
	base := newEnv(t)
	rec := &signals{}
	e := base.withSignals(t, rec)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	const email = "Zoe.Quinn@example.com"
	event := func(ref, key string) string {
		ev := e.fullEvent("checkout")
		ev["customer"] = map[string]any{"email": email, "firstName": "Zoella", "lastName": "Quinnbury",
			"address": "9 Quiet Road", "mobile": "+49 171 9876 5432", "reference": "cst-zoe"}
		ev["metadata"] = map[string]any{"note": "ship to zoe.quinn@example.com"}
		ev["transaction"] = map[string]any{"reference": ref, "date": "2026-11-20T10:00:00Z"}
		return e.acceptEvent(t, ev, header{"Idempotency-Key", key})
	}
	pending := event("order-1", "zoe.quinn@example.com/order-1")
	sent := event("order-2", "zoe.quinn@example.com/order-2")
	bob := e.acceptEvent(t, e.minimalEvent("checkout"))

	// The second invite was sent on its second attempt, and reviewed.
	ctx := context.Background()
	_, err := e.store.Invites.MarkScheduled(ctx, invite.KindInvite, sent, time.Now())
	require.NoError(t, err)
	for _, o := range []invite.SendResult{{Retry: true, Error: "421 <z***@example.com> try later"}, {SentAt: time.Now()}} {
		c, err := e.store.Invites.ClaimSend(ctx, invite.KindInvite, sent, invitedb.ClaimOptions{})
		require.NoError(t, err)
		require.True(t, c.Send)
		_, err = e.store.Invites.FinishSend(ctx, invite.KindInvite, sent, o)
		require.NoError(t, err)
	}
	inv := e.get(t, "/events/"+sent).object(t)["invite"].(map[string]any)
	assert.EqualValues(t, 2, inv["attempts"], "the count stays a number")
	history := inv["attemptHistory"].([]any)
	require.Len(t, history, 2)
	first := history[0].(map[string]any)
	assert.Equal(t, "transient", first["outcome"])
	assert.Equal(t, "421 <z***@example.com> try later", first["detail"])
	assert.Equal(t, "invite", first["kind"])
	assert.Regexp(t, timestampRE, first["startedAt"])
	assert.Regexp(t, timestampRE, first["finishedAt"])
	assert.Equal(t, "sent", history[1].(map[string]any)["outcome"])
	assert.Nil(t, history[1].(map[string]any)["detail"])

	_, _, err = e.store.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: sent, Rating: 5, Comment: "lovely", Locale: "en"})
	require.NoError(t, err)
	e.create(t, "/suppressions", map[string]any{"address": email, "reason": "manual"})
	assert.NotEmpty(t, testdb.Copies(t, e.store.DB(), "zoe.quinn@example.com"))

	// Who and how: exactly one of email and reference; only the full group.
	for _, body := range []string{`{}`, `{"email":"zoe.quinn@example.com","reference":"cst-zoe"}`, `{"email":"zoe"}`,
		`{"reference":""}`, `{"email":null}`} {
		requireProblem(t, e.do(t, http.MethodPost, "/customers/erase", e.token, body), http.StatusBadRequest)
	}
	readonly := e.tokenFor(t, e.account, auth.GroupReadonly)
	assert.Equal(t, http.StatusForbidden, e.do(t, http.MethodPost, "/customers/erase", readonly, `{"email":"zoe.quinn@example.com"}`).status)

	r := e.do(t, http.MethodPost, "/customers/erase", e.token, map[string]any{"email": "ZOE.QUINN@example.com"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, map[string]any{"events": 2.0, "invitesCancelled": 1.0, "remindersCancelled": 0.0, "invitesInFlight": 0.0,
		"reviewsKept": 1.0, "suppressionsKept": 1.0}, r.object(t))

	assert.Equal(t, map[string]int{"suppressions.address": 1, "suppression_history.address": 1},
		testdb.Copies(t, e.store.DB(), "zoe.quinn@example.com"), "no copy is left but the suppression list's and its history's")
	for _, s := range []string{"Zoella", "Quinnbury", "9 Quiet Road", "9876 5432", "4917198765432", "cst-zoe"} {
		assert.Empty(t, testdb.Copies(t, e.store.DB(), s), s)
	}
	assert.NotContains(t, strings.ToLower(e.logs.String()), "zoe.quinn", "the address is not logged")

	got := e.get(t, "/events/"+pending).object(t)
	assert.Empty(t, got["customer"], "nothing of the customer is left, not even the client's reference")
	assert.Regexp(t, timestampRE, got["erasedAt"])
	assert.Equal(t, "cancelled", got["invite"].(map[string]any)["status"])
	assert.Equal(t, map[string]any{"note": "ship to [erased]"}, got["metadata"])
	got = e.get(t, "/events/"+sent).object(t)
	assert.NotNil(t, got["review"], "the review is kept")
	assert.Len(t, got["invite"].(map[string]any)["attemptHistory"], 2, "the attempts are kept")
	assert.Nil(t, got["invite"].(map[string]any)["attemptHistory"].([]any)[0].(map[string]any)["detail"], "without their details")
	assert.Nil(t, e.get(t, "/events/"+bob).object(t)["erasedAt"], "another customer is untouched")

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, []string{workflows.WorkflowID(pending) + " " + workflows.CancelSignal}, rec.list())
	}, 10*time.Second, 10*time.Millisecond, "the cancelled invite's workflow is told")

	// Erasing again finds nothing; by reference likewise, as both are erased.
	for _, body := range []any{map[string]any{"email": email}, map[string]any{"reference": "cst-zoe"}} {
		r = e.do(t, http.MethodPost, "/customers/erase", e.token, body)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.EqualValues(t, 0, r.object(t)["events"])
	}
	// The idempotency keys went too: the same key is a new request now.
	assert.NotEqual(t, pending, event("order-1", "zoe.quinn@example.com/order-1"))
}
