package webhookdb_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/webhook"
)

// startAll claims every delivery due and marks it started, as the starter
// does once their workflows run.
func startAll(t *testing.T, st *store.Store) []webhookdb.WebhookStart {
	t.Helper()
	b, err := st.Webhooks.ClaimWebhookStarts(context.Background(), 100)
	require.NoError(t, err)
	ids := make([]string, len(b.Starts))
	for i, s := range b.Starts {
		ids[i] = s.ID
	}
	require.NoError(t, b.Finish(context.Background(), ids, nil))
	return b.Starts
}

func TestReplayingFailedDeliveries(t *testing.T) {
	t.Parallel()
	st, _, account := webhookStore(t)
	ctx := context.Background()
	a, other := account(eventfixture.Setting{}), account(eventfixture.Setting{})
	ep := endpoint(t, st, a.AccountID, webhook.InviteScheduled)
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)

	// Three deliveries an hour apart, all given up; one more that
	// succeeded and one still pending.
	var ids []string
	for i := range 5 {
		at := t0.Add(time.Duration(i) * time.Hour)
		st.SetClock(func() time.Time { return at })
		_, err := st.Invites.MarkScheduled(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{}), at)
		require.NoError(t, err)
		ids = append(ids, deliveries(t, st, ep)[0].ID)
	}
	startAll(t, st)
	for _, id := range ids[:3] {
		_, err := st.Webhooks.RecordWebhookAttempt(ctx, id, webhookdb.AttemptResult{Error: "connection refused"})
		require.NoError(t, err)
		_, err = st.Webhooks.FailWebhookDelivery(ctx, id, webhookdb.ReasonRetriesExhausted, "retries exhausted")
		require.NoError(t, err)
	}
	_, err := st.Webhooks.RecordWebhookAttempt(ctx, ids[3], webhookdb.AttemptResult{StatusCode: 204, Delivered: true})
	require.NoError(t, err)
	now := t0.Add(72 * time.Hour)
	st.SetClock(func() time.Time { return now })

	t.Run("one delivery", func(t *testing.T) {
		d, err := st.Webhooks.RetryWebhookDelivery(ctx, a.AccountID, ep.ID, ids[0])
		require.NoError(t, err)
		assert.Equal(t, webhookdb.DeliveryPending, d.Status)
		assert.Equal(t, ids[0], d.ID, "the same webhook-id")
		assert.Equal(t, 1, d.Attempts, "earlier attempts stay counted")

		starts := startAll(t, st)
		require.Len(t, starts, 1, "back in the outbox, and only it")
		assert.Equal(t, ids[0], starts[0].ID)
		assert.Equal(t, 1, starts[0].Replays, "its workflow is the first replay's")

		_, err = st.Webhooks.RetryWebhookDelivery(ctx, a.AccountID, ep.ID, ids[0])
		assert.ErrorIs(t, err, webhookdb.ErrNotFailed, "pending again: on its way")
		_, err = st.Webhooks.RetryWebhookDelivery(ctx, a.AccountID, ep.ID, ids[3])
		assert.ErrorIs(t, err, webhookdb.ErrNotFailed, "succeeded")
		_, err = st.Webhooks.RetryWebhookDelivery(ctx, other.AccountID, ep.ID, ids[1])
		assert.ErrorIs(t, err, store.ErrNotFound, "another account's endpoint")
		_, err = st.Webhooks.RetryWebhookDelivery(ctx, a.AccountID, ep.ID, store.NewID("msg"))
		assert.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("a period", func(t *testing.T) {
		f := webhookdb.ReplayFilter{Since: t0.Add(30 * time.Minute), Until: t0.Add(150 * time.Minute)}
		n, err := st.Webhooks.ReplayWebhookDeliveries(ctx, a.AccountID, ep.ID, f, true)
		require.NoError(t, err)
		assert.Equal(t, 2, n, "dry run: the failed ones made in the period")
		assert.Empty(t, startAll(t, st), "a dry run changes nothing")

		n, err = st.Webhooks.ReplayWebhookDeliveries(ctx, a.AccountID, ep.ID, f, false)
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		starts := startAll(t, st)
		got := []string{}
		for _, s := range starts {
			got = append(got, s.ID)
		}
		assert.ElementsMatch(t, ids[1:3], got, "not the succeeded, the pending or the one replayed already")

		n, err = st.Webhooks.ReplayWebhookDeliveries(ctx, a.AccountID, ep.ID, webhookdb.ReplayFilter{Since: t0}, false)
		require.NoError(t, err)
		assert.Zero(t, n, "nothing failed is left")
		_, err = st.Webhooks.ReplayWebhookDeliveries(ctx, other.AccountID, ep.ID, webhookdb.ReplayFilter{Since: t0}, false)
		assert.ErrorIs(t, err, store.ErrNotFound, "another account's endpoint")
	})

	t.Run("a disabled endpoint", func(t *testing.T) {
		_, err := st.Webhooks.FailWebhookDelivery(ctx, ids[1], webhookdb.ReasonRetriesExhausted, "retries exhausted")
		require.NoError(t, err)
		off := false
		_, err = st.Webhooks.UpdateWebhookEndpoint(ctx, a.AccountID, ep.ID, webhookdb.WebhookEndpointUpdate{Enabled: &off})
		require.NoError(t, err)
		_, err = st.Webhooks.RetryWebhookDelivery(ctx, a.AccountID, ep.ID, ids[1])
		assert.ErrorIs(t, err, webhookdb.ErrEndpointDisabled)
		_, err = st.Webhooks.ReplayWebhookDeliveries(ctx, a.AccountID, ep.ID, webhookdb.ReplayFilter{Since: t0}, false)
		assert.ErrorIs(t, err, webhookdb.ErrEndpointDisabled)
		acc, err := st.Webhooks.WebhookEndpointAccount(ctx, ep.ID)
		require.NoError(t, err)
		assert.Equal(t, a.AccountID, acc)
	})
}

// TestChangesWhileDisabledAreKeptForReplay: a change that happens while an
// endpoint is disabled is written as a delivery failed with reason
// endpoint_disabled, which no workflow is started for; once the endpoint
// is enabled, a replay of the period puts it back in the outbox.
func TestChangesWhileDisabledAreKeptForReplay(t *testing.T) {
	t.Parallel()
	st, _, account := webhookStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	ep := endpoint(t, st, a.AccountID, webhook.InviteScheduled, webhook.ReviewCreated)
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return t0 })
	off, on := false, true
	_, err := st.Webhooks.UpdateWebhookEndpoint(ctx, a.AccountID, ep.ID, webhookdb.WebhookEndpointUpdate{Enabled: &off})
	require.NoError(t, err)

	id := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: t0})
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: id, Rating: 5, Comment: "fine", Locale: "en"})
	require.NoError(t, err)
	st.SetClock(func() time.Time { return t0.Add(time.Second) }) // the list's order is by time
	_, err = st.Invites.MarkScheduled(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{}), t0)
	require.NoError(t, err)

	ds := deliveries(t, st, ep)
	// Both changes happened at t0, so their order is not defined.
	require.ElementsMatch(t, []string{webhook.ReviewCreated, webhook.InviteScheduled}, typesOf(ds))
	for _, d := range ds {
		assert.Equal(t, webhookdb.DeliveryFailed, d.Status)
		assert.Equal(t, webhookdb.ReasonEndpointDisabled, d.Reason.String)
		assert.Equal(t, "endpoint disabled when the change happened", d.LastError.String)
		assert.Zero(t, d.Attempts, "never sent")
	}
	assert.Empty(t, startAll(t, st), "no workflow runs for a delivery that cannot go out")
	n, _, err := st.Webhooks.WebhookBacklog(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing waits")

	_, err = st.Webhooks.UpdateWebhookEndpoint(ctx, a.AccountID, ep.ID, webhookdb.WebhookEndpointUpdate{Enabled: &on})
	require.NoError(t, err)
	st.SetClock(func() time.Time { return t0.Add(time.Hour) })
	n, err = st.Webhooks.ReplayWebhookDeliveries(ctx, a.AccountID, ep.ID, webhookdb.ReplayFilter{Since: t0.Add(-time.Minute)}, false)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	for _, d := range deliveries(t, st, ep) {
		assert.Equal(t, webhookdb.DeliveryPending, d.Status)
		assert.False(t, d.Reason.Valid, "no reason to fail any more")
	}
	starts := startAll(t, st)
	require.Len(t, starts, 2, "both back in the outbox")
	for _, s := range starts {
		assert.Equal(t, 1, s.Replays)
	}
}
