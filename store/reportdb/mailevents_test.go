package reportdb_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/reportdb"
	"github.com/touchpoint/touchpoint/webhook"
)

// sentMail claims and records as sent the invite of a new email event of
// a, and returns the event.
func sentMail(t *testing.T, st *store.Store, a *eventfixture.Account, email string) string {
	t.Helper()
	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: email, CustomerReference: "C-" + email})
	claimSend(t, st, id)
	_, err := st.Invites.FinishSend(t.Context(), invite.KindInvite, id, invite.SendResult{SentAt: st.Now()})
	require.NoError(t, err)
	return id
}

func mailDelivery(t *testing.T, st *store.Store, accountID, id string) map[string]reportdb.MailDelivery {
	t.Helper()
	e, err := st.Invites.Event(t.Context(), accountID, id)
	require.NoError(t, err)
	if e.MailDelivery == nil {
		return nil
	}
	var out map[string]reportdb.MailDelivery
	require.NoError(t, json.Unmarshal(e.MailDelivery, &out))
	return out
}

// TestMailReportsOutOfOrder: a bounce and a late "delivered" of the same
// message, in either order, leave it bounced, with the address
// suppressed once and one invite.bounced; a repeated report changes
// nothing; the history keeps every report on the attempt.
func TestMailReportsOutOfOrder(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := t.Context()
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for _, order := range []string{"bounce first", "delivered first"} {
		t.Run(order, func(t *testing.T) {
			a := account(eventfixture.Setting{})
			ep := endpoint(t, st, a.AccountID, webhook.InviteDelivered, webhook.InviteBounced, webhook.SuppressionCreated)
			id := sentMail(t, st, a, "Greta.Z@Example.com")
			delivered := reportdb.MailReport{Provider: "ses", ID: "d-" + id, Outcome: invite.MailDelivered, EventID: id,
				Kind: invite.KindInvite, At: at}
			bounced := reportdb.MailReport{Provider: "ses", ID: "b-" + id, Outcome: invite.MailBounced, EventID: id,
				Kind: invite.KindInvite, Detail: "Permanent General: 5.1.1", At: at.Add(time.Minute)}
			reports := []reportdb.MailReport{bounced, delivered}
			want := []reportdb.MailResult{reportdb.MailChanged, reportdb.MailRecorded}
			if order == "delivered first" {
				reports = []reportdb.MailReport{delivered, bounced}
				want = []reportdb.MailResult{reportdb.MailChanged, reportdb.MailChanged}
			}
			for i, r := range reports {
				res, err := st.Reports.ApplyMailReports(ctx, nil, []reportdb.MailReport{r})
				require.NoError(t, err)
				assert.Equal(t, []reportdb.MailResult{want[i]}, res, "report %d", i)
			}
			// The same again: duplicates.
			res, err := st.Reports.ApplyMailReports(ctx, nil, reports)
			require.NoError(t, err)
			assert.Equal(t, []reportdb.MailResult{reportdb.MailDuplicate, reportdb.MailDuplicate}, res)

			d := mailDelivery(t, st, a.AccountID, id)
			assert.Equal(t, invite.MailBounced, d["invite"].Status, "a later delivered never clears a bounce")
			assert.Equal(t, "ses", d["invite"].Provider)
			assert.True(t, d["invite"].At.Equal(at.Add(time.Minute)))

			sup, err := st.Suppressions.Suppression(ctx, a.AccountID, "greta.z@example.com")
			require.NoError(t, err)
			assert.Equal(t, invite.Bounced, sup.Reason)
			require.NotNil(t, sup.EventID)
			assert.Equal(t, id, *sup.EventID)

			types := typesOf(deliveries(t, st, ep))
			assert.Equal(t, 1, count(types, webhook.InviteBounced), "%v", types)
			assert.Equal(t, 1, count(types, webhook.SuppressionCreated), "%v", types)
			if order == "delivered first" {
				assert.Equal(t, 1, count(types, webhook.InviteDelivered), "%v", types)
			} else {
				assert.Zero(t, count(types, webhook.InviteDelivered), "%v", types)
			}

			hist, err := st.Invites.EventAttempts(ctx, id)
			require.NoError(t, err)
			require.Len(t, hist, 1)
			require.Len(t, hist[0].ProviderEvents, 2)
			assert.Equal(t, invite.MailDelivered, hist[0].ProviderEvents[0].Outcome, "oldest first")
			assert.Equal(t, invite.MailBounced, hist[0].ProviderEvents[1].Outcome)
			assert.Equal(t, "Permanent General: 5.1.1", hist[0].ProviderEvents[1].Detail)
		})
	}
}

func count(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// TestMailReportComplaint: a complaint suppresses the address as
// complained, outranks a bounce, and is reported; a deferral only joins
// the history; a reminder's reports are its own.
func TestMailReportComplaint(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := t.Context()
	a := account(eventfixture.Setting{})
	ep := endpoint(t, st, a.AccountID, webhook.InviteComplained, webhook.InviteDelivered)
	id := sentMail(t, st, a, "kim@example.com")
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

	res, err := st.Reports.ApplyMailReports(ctx, nil, []reportdb.MailReport{
		{Provider: "postmark", ID: "1", Outcome: invite.MailDeferred, EventID: id, Kind: invite.KindInvite, Detail: "SoftBounce", At: at},
		{Provider: "postmark", ID: "2", Outcome: invite.MailComplained, EventID: id, Kind: invite.KindInvite, At: at.Add(time.Hour)},
		{Provider: "postmark", ID: "3", Outcome: invite.MailDelivered, EventID: id, Kind: invite.KindReminder, At: at},
	})
	require.NoError(t, err)
	assert.Equal(t, []reportdb.MailResult{reportdb.MailRecorded, reportdb.MailChanged, reportdb.MailChanged}, res)

	d := mailDelivery(t, st, a.AccountID, id)
	assert.Equal(t, invite.MailComplained, d["invite"].Status)
	assert.Equal(t, invite.MailDelivered, d["reminder"].Status, "the reminder's message has its own status")
	sup, err := st.Suppressions.Suppression(ctx, a.AccountID, "kim@example.com")
	require.NoError(t, err)
	assert.Equal(t, invite.Complained, sup.Reason)

	ds := deliveries(t, st, ep)
	var complained map[string]any
	for _, dl := range ds {
		if dl.Type == webhook.InviteComplained {
			require.NoError(t, json.Unmarshal(dl.Payload, &complained))
		}
	}
	require.NotNil(t, complained, "invite.complained was written")
	assert.Equal(t, map[string]any{"eventId": id, "eventTypeId": a.EventTypeID, "channelId": a.ChannelID,
		"customerReference": "C-kim@example.com", "message": "invite", "status": "complained", "provider": "postmark",
		"at": "2026-11-20T10:00:00.000Z"}, complained["data"])
	assert.Equal(t, 1, count(typesOf(ds), webhook.InviteDelivered), "the reminder's delivery")
}

// TestMailReportUnknownAndReplay: a report of a message that is not
// Touchpoint's, or of an event that does not exist, changes nothing; a
// nonce is taken once: a replay with a report not applied before applies
// nothing at all, the provider's retry of what it applied is answered
// without applying it twice.
func TestMailReportUnknownAndReplay(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := t.Context()
	a := account(eventfixture.Setting{})
	id := sentMail(t, st, a, "lee@example.com")
	now := time.Now()
	res, err := st.Reports.ApplyMailReports(ctx, nil, []reportdb.MailReport{
		{Provider: "mailgun", ID: "x", Outcome: invite.MailBounced, At: now},
		{Provider: "mailgun", ID: "y", Outcome: invite.MailBounced, EventID: "evt-00000000-0000-4000-8000-000000000000", Kind: invite.KindInvite, At: now},
	})
	require.NoError(t, err)
	assert.Equal(t, []reportdb.MailResult{reportdb.MailUnknown, reportdb.MailUnknown}, res)

	nonce := &reportdb.MailNonce{Provider: "mailgun", Nonce: "token-" + id, SignedAt: now}
	bounce := []reportdb.MailReport{{Provider: "mailgun", ID: "z-" + id, Outcome: invite.MailBounced, EventID: id, Kind: invite.KindInvite, At: now}}
	_, err = st.Reports.ApplyMailReports(ctx, nonce, bounce)
	require.NoError(t, err)
	_, err = st.Reports.ApplyMailReports(ctx, nonce, []reportdb.MailReport{{Provider: "mailgun", ID: "w-" + id, Outcome: invite.MailComplained,
		EventID: id, Kind: invite.KindInvite, At: now}})
	require.ErrorIs(t, err, reportdb.ErrReplay)
	assert.Equal(t, invite.MailBounced, mailDelivery(t, st, a.AccountID, id)["invite"].Status, "the replay applied nothing")
	// The replay of the spent nonce with a report applied before and a
	// new one: the new one would be applied, so nothing is.
	_, err = st.Reports.ApplyMailReports(ctx, nonce, append(bounce, reportdb.MailReport{Provider: "mailgun", ID: "v-" + id,
		Outcome: invite.MailComplained, EventID: id, Kind: invite.KindInvite, At: now}))
	require.ErrorIs(t, err, reportdb.ErrReplay)
	assert.Equal(t, invite.MailBounced, mailDelivery(t, st, a.AccountID, id)["invite"].Status)

	// The provider's retry of the request it did not see answered: the
	// same nonce with the report applied before is taken, and changes
	// nothing; so is one whose report names no message of Touchpoint's.
	var reports int
	require.NoError(t, st.DB().Get(&reports, `SELECT count(*) FROM mail_events WHERE event_id = $1`, id))
	res, err = st.Reports.ApplyMailReports(ctx, nonce, bounce)
	require.NoError(t, err)
	assert.Equal(t, []reportdb.MailResult{reportdb.MailDuplicate}, res)
	unknown := &reportdb.MailNonce{Provider: "mailgun", Nonce: "token-unknown-" + id, SignedAt: now}
	for range 2 {
		res, err = st.Reports.ApplyMailReports(ctx, unknown, []reportdb.MailReport{{Provider: "mailgun", ID: "u-" + id, Outcome: invite.MailBounced, At: now}})
		require.NoError(t, err)
		assert.Equal(t, []reportdb.MailResult{reportdb.MailUnknown}, res)
	}
	var after int
	require.NoError(t, st.DB().Get(&after, `SELECT count(*) FROM mail_events WHERE event_id = $1`, id))
	assert.Equal(t, reports, after, "the retry applied nothing twice")

	// Housekeeping forgets nonces once no request can carry them.
	st.SetClock(func() time.Time { return now.Add(reportdb.MailNonceKeep + time.Minute) })
	c, ran, err := st.Housekeep(ctx, time.Hour)
	require.NoError(t, err)
	require.True(t, ran)
	assert.EqualValues(t, 2, c.MailNonces)
}

// TestMailReportsConcurrent: many reports of one message at once end in
// its highest status, with one webhook per change and one suppression.
func TestMailReportsConcurrent(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	a := account(eventfixture.Setting{})
	ep := endpoint(t, st, a.AccountID, webhook.SuppressionCreated)
	id := sentMail(t, st, a, "max@example.com")
	outcomes := []invite.MailOutcome{invite.MailDelivered, invite.MailBounced, invite.MailComplained, invite.MailDeferred}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.Reports.ApplyMailReports(t.Context(), nil, []reportdb.MailReport{{Provider: "sendgrid", ID: fmt.Sprint(i),
				Outcome: outcomes[i%len(outcomes)], EventID: id, Kind: invite.KindInvite, At: time.Now()}})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	assert.Equal(t, invite.MailComplained, mailDelivery(t, st, a.AccountID, id)["invite"].Status)
	assert.Equal(t, 1, len(deliveries(t, st, ep)), "one suppression.created")
}

// TestMailRankMatchesTheRule holds the SQL rank of delivery statuses to
// invite.NextDelivery.
func TestMailRankMatchesTheRule(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	a := account(eventfixture.Setting{})
	for _, first := range invite.MailOutcomes() {
		for _, second := range invite.MailOutcomes() {
			id := sentMail(t, st, a, fmt.Sprintf("rank-%s-%s@example.com", first, second))
			_, err := st.Reports.ApplyMailReports(t.Context(), nil, []reportdb.MailReport{
				{Provider: "ses", ID: "1-" + id, Outcome: first, EventID: id, Kind: invite.KindInvite, At: time.Now()},
				{Provider: "ses", ID: "2-" + id, Outcome: second, EventID: id, Kind: invite.KindInvite, At: time.Now()},
			})
			require.NoError(t, err)
			want, _ := invite.NextDelivery("", first)
			want, _ = invite.NextDelivery(want, second)
			got := mailDelivery(t, st, a.AccountID, id)["invite"].Status
			assert.Equal(t, want, got, "%s then %s", first, second)
		}
	}
}

// TestMailLastDay counts an account's mails sent and complaints of the
// last 24 hours.
func TestMailLastDay(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	a := account(eventfixture.Setting{})
	ids := []string{sentMail(t, st, a, "a@example.com"), sentMail(t, st, a, "b@example.com"), sentMail(t, st, a, "c@example.com")}
	_, err := st.Reports.ApplyMailReports(t.Context(), nil, []reportdb.MailReport{
		{Provider: "ses", ID: "c1", Outcome: invite.MailComplained, EventID: ids[0], Kind: invite.KindInvite, At: time.Now()},
	})
	require.NoError(t, err)
	all, err := st.Reports.MailLastDay(t.Context())
	require.NoError(t, err)
	assert.Contains(t, all, reportdb.AccountMail{AccountID: a.AccountID, Sent: 3, Complaints: 1})
}
