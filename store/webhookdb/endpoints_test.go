package webhookdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/webhookfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/webhook"
)

// The webhook helpers of internal/webhookfixture, by their names here.
var (
	webhookStore = webhookfixture.Store
	ticking      = webhookfixture.Ticking
	endpoint     = webhookfixture.Endpoint
	deliveries   = webhookfixture.Deliveries
	typesOf      = webhookfixture.TypesOf
)

// claimSend claims an invite's send, which must go out.
func claimSend(t *testing.T, st *store.Store, id string) invitedb.Claim {
	t.Helper()
	c, err := st.Invites.ClaimSend(context.Background(), invite.KindInvite, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send)
	return c
}

func TestWebhookEndpoints(t *testing.T) {
	t.Parallel()
	st, _, account := webhookStore(t)
	ctx := context.Background()
	a, b := account(eventfixture.Setting{}), account(eventfixture.Setting{})
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return start })

	first := endpoint(t, st, a.AccountID, webhook.InviteSent)
	assert.True(t, first.Enabled)
	assert.Equal(t, start, first.CreatedAt)
	st.SetClock(func() time.Time { return start.Add(time.Second) })
	second := endpoint(t, st, a.AccountID, webhook.ReviewCreated, webhook.ReviewUpdated)
	endpoint(t, st, b.AccountID, webhook.InviteSent)

	got, err := st.Webhooks.WebhookEndpoint(ctx, a.AccountID, first.ID)
	require.NoError(t, err)
	assert.Equal(t, first, got)
	_, err = st.Webhooks.WebhookEndpoint(ctx, b.AccountID, first.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "another account's endpoint")

	page, next, err := st.Webhooks.ListWebhookEndpoints(ctx, a.AccountID, store.Page{Limit: 1})
	require.NoError(t, err)
	require.Len(t, page, 1)
	assert.Equal(t, second.ID, page[0].ID, "newest first")
	require.NotNil(t, next)
	page, next, err = st.Webhooks.ListWebhookEndpoints(ctx, a.AccountID, store.Page{Limit: 1, After: next})
	require.NoError(t, err)
	require.Len(t, page, 1)
	assert.Equal(t, first.ID, page[0].ID)
	assert.Nil(t, next)

	st.SetClock(func() time.Time { return start.Add(time.Minute) })
	url, desc := "https://hooks.example.com/new", "orders"
	up, err := st.Webhooks.UpdateWebhookEndpoint(ctx, a.AccountID, first.ID, webhookdb.WebhookEndpointUpdate{URL: &url, Description: &desc,
		Events: []string{webhook.InviteFailed}})
	require.NoError(t, err)
	assert.Equal(t, url, up.URL)
	assert.Equal(t, desc, up.Description)
	assert.Equal(t, []string{webhook.InviteFailed}, []string(up.Events))
	assert.True(t, up.Enabled, "unchanged")
	assert.Equal(t, start.Add(time.Minute), up.UpdatedAt)
	_, err = st.Webhooks.UpdateWebhookEndpoint(ctx, b.AccountID, first.ID, webhookdb.WebhookEndpointUpdate{URL: &url})
	assert.ErrorIs(t, err, store.ErrNotFound)

	// Rotation: the old secret signs beside the new one for the overlap.
	rotated, err := st.Webhooks.RotateWebhookSecret(ctx, a.AccountID, first.ID, []byte("sealed new"), 24*time.Hour)
	require.NoError(t, err)
	assert.Equal(t, []byte("sealed new"), rotated.Secret)
	assert.Equal(t, first.Secret, rotated.PreviousSecret)
	require.NotNil(t, rotated.PreviousExpiresAt)
	assert.Equal(t, start.Add(time.Minute+24*time.Hour), *rotated.PreviousExpiresAt)
	_, err = st.Webhooks.RotateWebhookSecret(ctx, b.AccountID, first.ID, []byte("x"), time.Hour)
	assert.ErrorIs(t, err, store.ErrNotFound)

	require.NoError(t, st.Webhooks.DeleteWebhookEndpoint(ctx, a.AccountID, first.ID))
	assert.ErrorIs(t, st.Webhooks.DeleteWebhookEndpoint(ctx, a.AccountID, first.ID), store.ErrNotFound)
	_, _, err = st.Webhooks.ListWebhookDeliveries(ctx, a.AccountID, first.ID, "", store.Page{Limit: 10})
	assert.ErrorIs(t, err, store.ErrNotFound, "the deliveries of an endpoint that is gone")
}

// TestInviteTransitionsEmitWebhooks: every change of an invite's status
// that the event list names writes one delivery per subscribed endpoint of
// the account (failed at once for a disabled one), with a payload that
// carries no customer data.
func TestInviteTransitionsEmitWebhooks(t *testing.T) {
	t.Parallel()
	st, _, account := webhookStore(t)
	ctx := context.Background()
	a, other := account(eventfixture.Setting{}), account(eventfixture.Setting{})
	all := endpoint(t, st, a.AccountID, webhook.EventTypes()...)
	sentOnly := endpoint(t, st, a.AccountID, webhook.InviteSent)
	disabled := endpoint(t, st, a.AccountID, webhook.EventTypes()...)
	_, err := st.Webhooks.UpdateWebhookEndpoint(ctx, a.AccountID, disabled.ID, webhookdb.WebhookEndpointUpdate{Enabled: new(false)})
	require.NoError(t, err)
	foreign := endpoint(t, st, other.AccountID, webhook.EventTypes()...)
	ticking(st, time.Now())

	id := a.Event(t, eventfixture.Event{FirstName: "Jane", LastName: "Doe", Mobile: "+4915112345678", CustomerReference: "C-42"})
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	_, err = st.Invites.MarkScheduled(ctx, invite.KindInvite, id, at)
	require.NoError(t, err)
	_, err = st.Invites.MarkScheduled(ctx, invite.KindInvite, id, at.Add(time.Hour))
	require.NoError(t, err) // scheduled again: no new status, no webhook
	claimSend(t, st, id)
	_, err = st.Invites.FinishSend(ctx, invite.KindInvite, id, invite.SendResult{Retry: true, Error: "421 try later"})
	require.NoError(t, err) // back to scheduled for another try: not a new schedule
	_, err = st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	sentAt := at.Add(2 * time.Hour)
	_, err = st.Invites.FinishSend(ctx, invite.KindInvite, id, invite.SendResult{SentAt: sentAt})
	require.NoError(t, err)

	ds := deliveries(t, st, all)
	assert.Equal(t, []string{webhook.InviteScheduled, webhook.InviteSent}, typesOf(ds))
	assert.Equal(t, []string{webhook.InviteSent}, typesOf(deliveries(t, st, sentOnly)))
	for _, d := range deliveries(t, st, disabled) {
		assert.Equal(t, webhookdb.DeliveryFailed, d.Status, "a disabled endpoint is sent nothing")
		assert.Equal(t, webhookdb.ReasonEndpointDisabled, d.Reason.String)
	}
	assert.Equal(t, typesOf(ds), typesOf(deliveries(t, st, disabled)), "but is told nothing less once replayed")
	assert.Empty(t, deliveries(t, st, foreign), "another account's endpoint gets nothing")

	sent := ds[0]
	assert.True(t, store.ValidID("msg", sent.ID), sent.ID)
	assert.Equal(t, webhookdb.DeliveryPending, sent.Status)
	assert.Zero(t, sent.Attempts)
	var body struct {
		Type      string         `json:"type"`
		Timestamp string         `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(sent.Payload, &body))
	assert.Equal(t, webhook.InviteSent, body.Type)
	assert.Equal(t, map[string]any{"eventId": id, "eventTypeId": a.EventTypeID, "channelId": a.ChannelID,
		"customerReference": "C-42", "status": "sent", "reason": nil, "medium": "email",
		"scheduledFor": "2026-03-02T10:00:00.000Z", "sentAt": "2026-03-02T11:00:00.000Z"}, body.Data)
	assert.True(t, strings.HasPrefix(string(sent.Payload), `{"type":"invite.sent","timestamp":"`), "stored as marshalled: %s", sent.Payload)
	for _, d := range ds {
		for _, pii := range []string{"jane", "doe", "example.com", "4915112345678"} {
			assert.NotContains(t, strings.ToLower(string(d.Payload)), pii, "no customer data in a payload")
		}
	}

	// Skipped, failed, cancelled: each its type.
	skipped := a.Event(t, eventfixture.Event{})
	_, err = st.Invites.MarkSkipped(ctx, invite.KindInvite, skipped, invite.SettingInactive)
	require.NoError(t, err)
	failed := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
	_, err = st.Invites.GiveUp(ctx, invite.KindInvite, failed, invite.Reason("smtp_error"), "gave up")
	require.NoError(t, err)
	cancelled := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
	_, err = st.Invites.CancelInvite(ctx, a.AccountID, cancelled)
	require.NoError(t, err)
	_, err = st.Invites.CancelInvite(ctx, a.AccountID, cancelled)
	require.NoError(t, err) // a cancel made already changes nothing and says nothing
	ds = deliveries(t, st, all)
	assert.Equal(t, []string{webhook.InviteScheduled, webhook.InviteSent, webhook.InviteSkipped, webhook.InviteFailed,
		webhook.InviteCancelled}, typesOf(ds))
	require.NoError(t, json.Unmarshal(ds[1].Payload, &body))
	assert.Equal(t, "smtp_error", body.Data["reason"])
	assert.Nil(t, body.Data["customerReference"], "none given")
}

func TestReminderReviewAndSuppressionEmitWebhooks(t *testing.T) {
	t.Parallel()
	st, _, account := webhookStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	all := endpoint(t, st, a.AccountID, webhook.ReminderSent, webhook.ReviewCreated, webhook.ReviewUpdated, webhook.SuppressionCreated)
	ticking(st, time.Now())

	sentAt := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	id := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: sentAt, CustomerReference: "C-7"})
	_, err := st.Invites.MarkScheduled(ctx, invite.KindReminder, id, sentAt.Add(72*time.Hour))
	require.NoError(t, err)
	c, err := st.Invites.ClaimSend(ctx, invite.KindReminder, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send)
	_, err = st.Invites.FinishSend(ctx, invite.KindReminder, id, invite.SendResult{SentAt: sentAt.Add(72 * time.Hour)})
	require.NoError(t, err)

	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: id, Rating: 2, Comment: "late", Locale: "de"})
	require.NoError(t, err)
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: id, Rating: 4, Comment: "arrived after all", Locale: "de"})
	require.NoError(t, err)

	_, _, err = st.Suppressions.AddSuppression(ctx, a.AccountID, "jane.doe@example.com", invite.Email, invite.Unsubscribed, id)
	require.NoError(t, err)
	_, _, err = st.Suppressions.AddSuppression(ctx, a.AccountID, "jane.doe@example.com", invite.Email, invite.Manual, "")
	require.NoError(t, err) // there already: nothing new
	_, _, err = st.Suppressions.AddSuppression(ctx, a.AccountID, "+4915112345678", invite.SMS, invite.Manual, "")
	require.NoError(t, err)

	ds := deliveries(t, st, all)
	require.Equal(t, []string{webhook.ReminderSent, webhook.ReviewCreated, webhook.ReviewUpdated,
		webhook.SuppressionCreated, webhook.SuppressionCreated}, typesOf(ds))
	data := func(d webhookdb.WebhookDelivery) map[string]any {
		var body struct {
			Data map[string]any `json:"data"`
		}
		require.NoError(t, json.Unmarshal(d.Payload, &body))
		return body.Data
	}
	assert.Equal(t, map[string]any{"eventId": id, "eventTypeId": a.EventTypeID, "channelId": a.ChannelID,
		"customerReference": "C-7", "status": "sent", "medium": "email",
		"scheduledFor": "2026-06-04T12:00:00.000Z", "sentAt": "2026-06-04T12:00:00.000Z"}, data(ds[4]))
	review := data(ds[2])
	assert.Equal(t, "arrived after all", review["comment"])
	assert.EqualValues(t, 4, review["rating"])
	assert.Equal(t, "C-7", review["customerReference"])
	assert.Equal(t, map[string]any{"medium": "email", "reason": "unsubscribed", "eventId": id, "customerReference": "C-7"}, data(ds[1]))
	assert.Equal(t, map[string]any{"medium": "sms", "reason": "manual", "eventId": nil, "customerReference": nil}, data(ds[0]))
	for _, d := range ds {
		assert.NotContains(t, string(d.Payload), "jane.doe", "the suppressed address is never sent")
		assert.NotContains(t, string(d.Payload), "4915112345678")
	}
}

// TestWebhookOutboxIsAtomic: a state change and its deliveries commit
// together or not at all, whichever of them fails.
func TestWebhookOutboxIsAtomic(t *testing.T) {
	t.Parallel()
	st, db, account := webhookStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	ep := endpoint(t, st, a.AccountID, webhook.EventTypes()...)

	// The transition fails at commit (a deferred check on the event row):
	// its delivery, written before, goes with it.
	doomed := a.Event(t, eventfixture.Event{})
	_, err := db.Exec(`CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.id = '` + doomed + `' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$;
		CREATE CONSTRAINT TRIGGER refuse_event AFTER UPDATE ON events DEFERRABLE INITIALLY DEFERRED
		FOR EACH ROW EXECUTE FUNCTION refuse_event()`)
	require.NoError(t, err)
	_, err = st.Invites.MarkScheduled(ctx, invite.KindInvite, doomed, time.Now())
	require.Error(t, err)
	st1, err := st.Invites.LoadInviteState(ctx, doomed)
	require.NoError(t, err)
	assert.Equal(t, invite.Pending, st1.Status)
	assert.Empty(t, deliveries(t, st, ep), "a rolled-back transition leaves no delivery")

	// The delivery cannot be written: the transition does not happen.
	_, err = db.Exec(`CREATE FUNCTION refuse_delivery() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'no room'; END $$;
		CREATE TRIGGER refuse_delivery BEFORE INSERT ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION refuse_delivery()`)
	require.NoError(t, err)
	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
	_, err = st.Invites.CancelInvite(ctx, a.AccountID, id)
	require.Error(t, err)
	st2, err := st.Invites.LoadInviteState(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, invite.Scheduled, st2.Status, "no change without its webhook")
	_, _, err = st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: id, Rating: 5, Comment: "", Locale: "en"})
	require.Error(t, err)
	_, err = st.Reviews.ReviewOfEvent(ctx, id)
	assert.ErrorIs(t, err, store.ErrNotFound)

	// Without subscribers nothing is written, and nothing can fail.
	_, err = st.Webhooks.UpdateWebhookEndpoint(ctx, a.AccountID, ep.ID, webhookdb.WebhookEndpointUpdate{Events: []string{webhook.ReminderSent}})
	require.NoError(t, err)
	_, err = st.Invites.CancelInvite(ctx, a.AccountID, id)
	require.NoError(t, err)
}

func TestWebhookAttempts(t *testing.T) {
	t.Parallel()
	st, _, account := webhookStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	ep := endpoint(t, st, a.AccountID, webhook.InviteScheduled, webhook.InviteCancelled)
	spare := endpoint(t, st, a.AccountID, webhook.InviteScheduled)
	now := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return now })

	emit := func() {
		t.Helper()
		_, err := st.Invites.MarkScheduled(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{}), now)
		require.NoError(t, err)
	}
	emit()
	d := deliveries(t, st, ep)[0]

	att, err := st.Webhooks.LoadWebhookAttempt(ctx, d.ID)
	require.NoError(t, err)
	assert.Equal(t, ep.URL, att.URL)
	assert.True(t, att.Enabled)
	assert.Equal(t, [][]byte{ep.Secret}, att.Secrets)
	assert.JSONEq(t, string(d.Payload), string(att.Delivery.Payload))

	// A failed attempt is counted and kept; the delivery stays pending.
	got, err := st.Webhooks.RecordWebhookAttempt(ctx, d.ID, webhookdb.AttemptResult{StatusCode: 503, Error: "503 Service Unavailable"})
	require.NoError(t, err)
	assert.Equal(t, webhookdb.DeliveryPending, got.Status)
	assert.Equal(t, 1, got.Attempts)
	assert.EqualValues(t, 503, got.LastStatusCode.Int32)
	assert.Equal(t, "503 Service Unavailable", got.LastError.String)
	got, err = st.Webhooks.RecordWebhookAttempt(ctx, d.ID, webhookdb.AttemptResult{Error: "no answer within 10s"})
	require.NoError(t, err)
	assert.False(t, got.LastStatusCode.Valid, "no answer, no status code")
	st.SetClock(func() time.Time { return now.Add(time.Minute) })
	got, err = st.Webhooks.RecordWebhookAttempt(ctx, d.ID, webhookdb.AttemptResult{StatusCode: 204, Delivered: true,
		Took: 87 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, webhookdb.DeliverySucceeded, got.Status)
	assert.Equal(t, 3, got.Attempts)
	assert.False(t, got.LastError.Valid)
	assert.Equal(t, now.Add(time.Minute), got.DeliveredAt.Time)
	// Each attempt is in the log, oldest first, with its own answer.
	assert.Equal(t, webhookdb.DeliveryAttempts{
		{At: now, StatusCode: 503, Error: "503 Service Unavailable"},
		{At: now, Error: "no answer within 10s"},
		{At: now.Add(time.Minute), StatusCode: 204, TookMs: 87},
	}, got.AttemptLog)
	listed := deliveries(t, st, ep)
	require.Equal(t, d.ID, listed[0].ID)
	assert.Equal(t, got.AttemptLog, listed[0].AttemptLog, "the list reads the log")
	got, err = st.Webhooks.FailWebhookDelivery(ctx, d.ID, webhookdb.ReasonRetriesExhausted, "gave up")
	require.NoError(t, err)
	assert.Equal(t, webhookdb.DeliverySucceeded, got.Status, "a delivery that succeeded is not given up")

	// Given up: the last attempt's error stays.
	emit()
	d = deliveries(t, st, ep)[0]
	_, err = st.Webhooks.RecordWebhookAttempt(ctx, d.ID, webhookdb.AttemptResult{StatusCode: 500, Error: "500 Internal Server Error"})
	require.NoError(t, err)
	got, err = st.Webhooks.FailWebhookDelivery(ctx, d.ID, webhookdb.ReasonRetriesExhausted, "retries exhausted")
	require.NoError(t, err)
	assert.Equal(t, webhookdb.DeliveryFailed, got.Status)
	assert.Equal(t, "500 Internal Server Error", got.LastError.String)
	assert.Equal(t, webhookdb.ReasonRetriesExhausted, got.Reason.String)

	// 410: the delivery fails, the endpoint is disabled and its other
	// pending deliveries are given up; other endpoints are untouched.
	emit()
	emit()
	// The clock stands still: list the pending ones, not the newest.
	pending, _, err := st.Webhooks.ListWebhookDeliveries(ctx, a.AccountID, ep.ID, webhookdb.DeliveryPending, store.Page{Limit: 10})
	require.NoError(t, err)
	require.Len(t, pending, 2)
	got, err = st.Webhooks.RecordWebhookAttempt(ctx, pending[0].ID, webhookdb.AttemptResult{StatusCode: 410, Error: "410 Gone", Gone: true})
	require.NoError(t, err)
	assert.Equal(t, webhookdb.DeliveryFailed, got.Status)
	assert.Equal(t, "410 Gone", got.LastError.String)
	assert.Equal(t, webhookdb.ReasonGone, got.Reason.String)
	other, _, err := st.Webhooks.ListWebhookDeliveries(ctx, a.AccountID, ep.ID, webhookdb.DeliveryFailed, store.Page{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, other, 3, "the one given up before, the 410 and the one that was waiting")
	gaveUp := 0
	for _, d := range other {
		if strings.Contains(d.LastError.String, "410") {
			gaveUp++
		}
	}
	assert.Equal(t, 2, gaveUp, "the 410, and the waiting one given up saying why")
	gone, err := st.Webhooks.WebhookEndpoint(ctx, a.AccountID, ep.ID)
	require.NoError(t, err)
	assert.False(t, gone.Enabled)
	n, oldest, err := st.Webhooks.WebhookBacklog(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4, n, "the spare endpoint's deliveries still wait")
	assert.Equal(t, time.Minute, oldest)
	for _, d := range deliveries(t, st, spare) {
		assert.Equal(t, webhookdb.DeliveryPending, d.Status)
	}

	// Disabling an endpoint by hand gives up its pending deliveries too.
	_, err = st.Webhooks.UpdateWebhookEndpoint(ctx, a.AccountID, spare.ID, webhookdb.WebhookEndpointUpdate{Enabled: new(false)})
	require.NoError(t, err)
	for _, d := range deliveries(t, st, spare) {
		assert.Equal(t, webhookdb.DeliveryFailed, d.Status)
		assert.Equal(t, webhookdb.ReasonEndpointDisabled, d.Reason.String)
		assert.Equal(t, "endpoint disabled", d.LastError.String)
	}
	// An attempt that was under way when the endpoint was disabled is
	// counted, but does not hide why the delivery was given up.
	late, err := st.Webhooks.RecordWebhookAttempt(ctx, deliveries(t, st, spare)[0].ID, webhookdb.AttemptResult{StatusCode: 503, Error: "503 Service Unavailable"})
	require.NoError(t, err)
	assert.Equal(t, webhookdb.DeliveryFailed, late.Status)
	assert.Equal(t, "endpoint disabled", late.LastError.String)
	assert.False(t, late.LastStatusCode.Valid)
	assert.Equal(t, 1, late.Attempts)
	n, _, err = st.Webhooks.WebhookBacklog(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)

	_, err = st.Webhooks.LoadWebhookAttempt(ctx, store.NewID("msg"))
	assert.ErrorIs(t, err, store.ErrNotFound)
}

func TestPreviousSecretSignsUntilItExpires(t *testing.T) {
	t.Parallel()
	st, _, account := webhookStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	ep := endpoint(t, st, a.AccountID, webhook.InviteScheduled)
	now := time.Now().UTC()
	st.SetClock(func() time.Time { return now })
	_, err := st.Invites.MarkScheduled(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{}), now)
	require.NoError(t, err)
	d := deliveries(t, st, ep)[0]
	_, err = st.Webhooks.RotateWebhookSecret(ctx, a.AccountID, ep.ID, []byte("sealed new"), 24*time.Hour)
	require.NoError(t, err)

	att, err := st.Webhooks.LoadWebhookAttempt(ctx, d.ID)
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte("sealed new"), ep.Secret}, att.Secrets, "both sign during the overlap")
	st.SetClock(func() time.Time { return now.Add(24 * time.Hour) })
	att, err = st.Webhooks.LoadWebhookAttempt(ctx, d.ID)
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte("sealed new")}, att.Secrets, "then the new one alone")
}

// TestWebhookStartClaims: starters claim disjoint batches, a finished
// delivery is not claimed again, a failed start waits for its retry.
func TestWebhookStartClaims(t *testing.T) {
	t.Parallel()
	st, _, account := webhookStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	endpoint(t, st, a.AccountID, webhook.InviteScheduled)
	now := time.Now().UTC()
	st.SetClock(func() time.Time { return now })
	for range 6 {
		_, err := st.Invites.MarkScheduled(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{}), now)
		require.NoError(t, err)
	}

	var (
		mu      sync.Mutex
		claimed []string
		batches []*store.StartBatch[webhookdb.WebhookStart]
	)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			b, err := st.Webhooks.ClaimWebhookStarts(ctx, 2)
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			batches = append(batches, b)
			for _, s := range b.Starts {
				claimed = append(claimed, s.ID)
				assert.Equal(t, webhook.InviteScheduled, s.Type)
				assert.Equal(t, webhookdb.DeliveryPending, s.Status)
			}
		})
	}
	wg.Wait()
	assert.Len(t, claimed, 6)
	seen := map[string]bool{}
	for _, id := range claimed {
		assert.False(t, seen[id], "claimed twice: %s", id)
		seen[id] = true
	}

	require.Len(t, batches, 3)
	retried := batches[0].Starts[0].ID
	require.NoError(t, batches[0].Finish(ctx, []string{batches[0].Starts[1].ID},
		[]store.StartRetry{{ID: retried, After: time.Minute, Error: "temporal down"}}))
	require.NoError(t, batches[1].Finish(ctx, []string{batches[1].Starts[0].ID, batches[1].Starts[1].ID}, nil))
	require.NoError(t, batches[2].Release())

	b, err := st.Webhooks.ClaimWebhookStarts(ctx, 10)
	require.NoError(t, err)
	assert.Len(t, b.Starts, 2, "the released ones; the retry is not due yet")
	require.NoError(t, b.Release())
	st.SetClock(func() time.Time { return now.Add(time.Minute) })
	b, err = st.Webhooks.ClaimWebhookStarts(ctx, 10)
	require.NoError(t, err)
	require.Len(t, b.Starts, 3)
	assert.Equal(t, retried, b.Starts[2].ID, "due last")
	assert.Equal(t, 1, b.Starts[2].StartAttempts)
	require.NoError(t, b.Release())
}

// TestWebhookAttemptLogKeepsTheLast20: a delivery retried past the log's
// size keeps its 20 latest attempts, while attempts counts them all.
func TestWebhookAttemptLogKeepsTheLast20(t *testing.T) {
	t.Parallel()
	st, _, account := webhookStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	ep := endpoint(t, st, a.AccountID, webhook.InviteScheduled)
	_, err := st.Invites.MarkScheduled(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{}), st.Now())
	require.NoError(t, err)
	d := deliveries(t, st, ep)[0]
	var got webhookdb.WebhookDelivery
	for n := 1; n <= 25; n++ {
		got, err = st.Webhooks.RecordWebhookAttempt(ctx, d.ID, webhookdb.AttemptResult{StatusCode: 500, Error: fmt.Sprintf("attempt %d", n)})
		require.NoError(t, err)
	}
	assert.Equal(t, 25, got.Attempts)
	require.Len(t, got.AttemptLog, 20)
	assert.Equal(t, "attempt 6", got.AttemptLog[0].Error)
	assert.Equal(t, "attempt 25", got.AttemptLog[19].Error)
}
