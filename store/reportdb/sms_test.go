package reportdb_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
)

const mobile = "+4915112345678"

// delivery is an event's SMS delivery reports as the API reads them.
func delivery(t *testing.T, st *store.Store, accountID, id string) map[string]map[string]any {
	t.Helper()
	e, err := st.Invites.Event(t.Context(), accountID, id)
	require.NoError(t, err)
	if e.SMSDelivery == nil {
		return nil
	}
	var d map[string]map[string]any
	require.NoError(t, json.Unmarshal(e.SMSDelivery, &d))
	for _, r := range d {
		require.NotEmpty(t, r["updatedAt"])
		delete(r, "updatedAt")
	}
	return d
}

func TestRecordSMSDelivery(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{Medium: invite.SMS})
	id := a.SentText(t, st, mobile)
	record := func(d invite.SMSReport) bool {
		t.Helper()
		ok, err := st.Reports.RecordSMSDelivery(ctx, d)
		require.NoError(t, err)
		return ok
	}

	assert.Nil(t, delivery(t, st, a.AccountID, id), "no report yet")
	assert.True(t, record(invite.SMSReport{MessageSID: "SM1", EventID: id, Status: "sent"}))
	assert.Equal(t, map[string]map[string]any{"invite": {"status": "sent", "errorCode": nil}}, delivery(t, st, a.AccountID, id))
	assert.True(t, record(invite.SMSReport{MessageSID: "SM1", EventID: id, Status: "delivered"}))
	assert.True(t, record(invite.SMSReport{MessageSID: "SM1", EventID: id, Status: "sent"}), "a late report is taken …")
	assert.Equal(t, "delivered", delivery(t, st, a.AccountID, id)["invite"]["status"], "… but does not overwrite a later status")

	// The reminder's message, reported without the event in its URL once
	// it is known, and undelivered for a reason that suppresses the number.
	assert.True(t, record(invite.SMSReport{MessageSID: "SM2", EventID: id, Reminder: true, Status: "queued"}))
	assert.True(t, record(invite.SMSReport{MessageSID: "SM2", Status: "undelivered", ErrorCode: 30005, Suppress: invite.Bounced}))
	assert.Equal(t, map[string]map[string]any{
		"invite":   {"status": "delivered", "errorCode": nil},
		"reminder": {"status": "undelivered", "errorCode": float64(30005)},
	}, delivery(t, st, a.AccountID, id))
	sup, err := st.Suppressions.Suppression(ctx, a.AccountID, mobile)
	require.NoError(t, err, "the number the claim recorded is suppressed")
	assert.Equal(t, invite.Bounced, sup.Reason)
	assert.Equal(t, invite.SMS, sup.Medium)
	require.NotNil(t, sup.EventID)
	assert.Equal(t, id, *sup.EventID)

	// A retried invite is a new message: the newest is shown.
	assert.True(t, record(invite.SMSReport{MessageSID: "SM3", EventID: id, Status: "queued"}))
	assert.Equal(t, "queued", delivery(t, st, a.AccountID, id)["invite"]["status"])

	// The number the report names wins over the recorded one.
	assert.True(t, record(invite.SMSReport{MessageSID: "SM4", EventID: id, Status: "failed", ErrorCode: 21610,
		Suppress: invite.Unsubscribed, Number: "+4915199999999"}))
	sup, err = st.Suppressions.Suppression(ctx, a.AccountID, "+4915199999999")
	require.NoError(t, err)
	assert.Equal(t, invite.Unsubscribed, sup.Reason)

	// Nothing to attach it to.
	assert.False(t, record(invite.SMSReport{MessageSID: "SM5", EventID: store.NewID("evt"), Status: "delivered"}), "unknown event")
	assert.False(t, record(invite.SMSReport{MessageSID: "SM6", Status: "delivered"}), "unknown message, no event")
	var n int
	require.NoError(t, st.DB().GetContext(ctx, &n, `SELECT count(*) FROM sms_deliveries WHERE message_sid IN ('SM5', 'SM6')`))
	assert.Zero(t, n)

	// The reports are kept in their event's month, and go with it.
	require.NoError(t, st.DB().GetContext(ctx, &n, `SELECT count(*) FROM sms_deliveries s
		WHERE s.event_received_at <> (SELECT received_at FROM events e WHERE e.id = s.event_id)`))
	assert.Zero(t, n)
	require.NoError(t, st.DB().GetContext(ctx, &n, `SELECT count(*) FROM sms_deliveries`))
	assert.Positive(t, n)
}

func TestSuppressTextedNumber(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	texted := account(eventfixture.Setting{Medium: invite.SMS})
	texted.SentText(t, st, mobile)
	latest := texted.SentText(t, st, mobile)
	alsoTexted := account(eventfixture.Setting{Medium: invite.SMS})
	alsoTexted.SentText(t, st, mobile)
	_, _, err := st.Suppressions.AddSuppression(ctx, alsoTexted.AccountID, mobile, invite.SMS, invite.Manual, "")
	require.NoError(t, err)
	otherNumber := account(eventfixture.Setting{Medium: invite.SMS})
	otherNumber.SentText(t, st, "+4915198765432")
	// The number is in this account's event, which was never texted.
	emailed := account(eventfixture.Setting{})
	emailed.Event(t, eventfixture.Event{Status: invite.Sent, Mobile: mobile})

	added, err := st.Reports.SuppressTextedNumber(ctx, mobile, invite.Unsubscribed)
	require.NoError(t, err)
	assert.Equal(t, 1, added)
	sup, err := st.Suppressions.Suppression(ctx, texted.AccountID, mobile)
	require.NoError(t, err)
	assert.Equal(t, invite.Unsubscribed, sup.Reason)
	assert.Equal(t, invite.SMS, sup.Medium)
	require.NotNil(t, sup.EventID)
	assert.Equal(t, latest, *sup.EventID, "the entry names the account's latest text")
	sup, err = st.Suppressions.Suppression(ctx, alsoTexted.AccountID, mobile)
	require.NoError(t, err)
	assert.Equal(t, invite.Manual, sup.Reason, "an entry that exists is kept")
	for _, a := range []*eventfixture.Account{otherNumber, emailed} {
		_, err = st.Suppressions.Suppression(ctx, a.AccountID, mobile)
		assert.ErrorIs(t, err, store.ErrNotFound, "an account that did not text the number")
	}

	added, err = st.Reports.SuppressTextedNumber(ctx, mobile, invite.Unsubscribed)
	require.NoError(t, err)
	assert.Zero(t, added, "repeating it is harmless")
	added, err = st.Reports.SuppressTextedNumber(ctx, "+4915100000000", invite.Unsubscribed)
	require.NoError(t, err)
	assert.Zero(t, added, "a number nobody texted")
}
