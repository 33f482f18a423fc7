package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/webhook"
)

// `webhooks replay` puts an endpoint's failed deliveries of a period back
// in the outbox; a dry run counts them and changes nothing.
func TestWebhooksReplayCLI(t *testing.T) {
	t.Parallel()
	vars, db := opsDatabase(t)
	ctx := context.Background()
	st := storeset.New(db, "P7D")
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	ep, err := st.Webhooks.CreateWebhookEndpoint(ctx, webhookdb.WebhookEndpoint{ID: store.NewID("whk"), AccountID: a.AccountID,
		URL: "https://hooks.example.com/tp", Events: []string{webhook.InviteScheduled}, Secret: []byte("sealed")})
	require.NoError(t, err)
	for _, ago := range []time.Duration{2 * time.Hour, 5 * time.Hour, 100 * time.Hour} {
		at := time.Now().Add(-ago)
		st.SetClock(func() time.Time { return at })
		_, err := st.Invites.MarkScheduled(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{}), at)
		require.NoError(t, err)
	}
	ds, _, err := st.Webhooks.ListWebhookDeliveries(ctx, a.AccountID, ep.ID, "", store.Page{Limit: 10})
	require.NoError(t, err)
	for _, d := range ds {
		_, err := st.Webhooks.FailWebhookDelivery(ctx, d.ID, webhookdb.ReasonRetriesExhausted, "retries exhausted")
		require.NoError(t, err)
	}
	pending := func() int {
		var n int
		require.NoError(t, db.Get(&n, `SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`))
		return n
	}

	out, err := opsCLI(t, vars, "webhooks", "replay", "--endpoint", ep.ID, "--dry-run")
	require.NoError(t, err)
	assert.Contains(t, out, "2 failed deliveries would be replayed (dry run: nothing changed)", "the default period is 72h")
	assert.Zero(t, pending())

	out, err = opsCLI(t, vars, "webhooks", "replay", "--endpoint", ep.ID, "--since", "4h")
	require.NoError(t, err)
	assert.Contains(t, out, "1 failed deliveries replayed")
	assert.Equal(t, 1, pending())

	for _, bad := range [][]string{
		{}, {"--endpoint", "evt-x"}, {"--endpoint", ep.ID, "--since", "yesterday"},
		{"--endpoint", ep.ID, "--since", "1h", "--until", "2h"}, {"--endpoint", ep.ID, "stray"},
		{"--endpoint", store.NewID("whk")},
	} {
		_, err := opsCLI(t, vars, append([]string{"webhooks", "replay"}, bad...)...)
		assert.Error(t, err, "%v", bad)
	}
	_, err = opsCLI(t, vars, "webhooks")
	assert.Error(t, err)

	// The period is 31 days at most, with --until or without, as in the API.
	_, err = opsCLI(t, vars, "webhooks", "replay", "--endpoint", ep.ID, "--since", "745h")
	assert.ErrorContains(t, err, "--since: must be at most 31 days ago")
	_, err = opsCLI(t, vars, "webhooks", "replay", "--endpoint", ep.ID, "--since", "1000h", "--until", "200h")
	assert.ErrorContains(t, err, "--until: must be at most 31 days after since")
	_, err = opsCLI(t, vars, "webhooks", "replay", "--endpoint", ep.ID, "--since", "743h", "--dry-run")
	assert.NoError(t, err, "31 days less an hour")
}

// A disabled endpoint is enabled with `webhooks enable` before its
// deliveries are replayed; the replay says so until then.
func TestWebhooksEnableCLI(t *testing.T) {
	t.Parallel()
	vars, db := opsDatabase(t)
	ctx := context.Background()
	st := storeset.New(db, "P7D")
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	ep, err := st.Webhooks.CreateWebhookEndpoint(ctx, webhookdb.WebhookEndpoint{ID: store.NewID("whk"), AccountID: a.AccountID,
		URL: "https://hooks.example.com/tp", Events: []string{webhook.InviteScheduled}, Secret: []byte("sealed")})
	require.NoError(t, err)
	disabled := false
	_, err = st.Webhooks.UpdateWebhookEndpoint(ctx, a.AccountID, ep.ID, webhookdb.WebhookEndpointUpdate{Enabled: &disabled})
	require.NoError(t, err)
	// A change while it is disabled: a delivery failed at once.
	_, err = st.Invites.MarkScheduled(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{}), time.Now())
	require.NoError(t, err)

	_, err = opsCLI(t, vars, "webhooks", "replay", "--endpoint", ep.ID)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "enable it before replaying")
	assert.Contains(t, err.Error(), "touchpoint webhooks enable --endpoint "+ep.ID, "the command to run")

	out, err := opsCLI(t, vars, "webhooks", "enable", "--endpoint", ep.ID)
	require.NoError(t, err)
	assert.Contains(t, out, "endpoint "+ep.ID+" is enabled")
	got, err := st.Webhooks.WebhookEndpoint(ctx, a.AccountID, ep.ID)
	require.NoError(t, err)
	assert.True(t, got.Enabled)

	out, err = opsCLI(t, vars, "webhooks", "replay", "--endpoint", ep.ID)
	require.NoError(t, err)
	assert.Contains(t, out, "1 failed deliveries replayed", "the change it missed while disabled")

	for _, bad := range [][]string{{}, {"--endpoint", "evt-x"}, {"--endpoint", store.NewID("whk")}, {"--endpoint", ep.ID, "stray"}} {
		_, err := opsCLI(t, vars, append([]string{"webhooks", "enable"}, bad...)...)
		assert.Error(t, err, "%v", bad)
	}
}
