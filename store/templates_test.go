package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/templates"
)

func TestTemplateVersionsAndLevels(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	accKey := store.TemplateKey{AccountID: a.AccountID, Kind: templates.KindInvite, Locale: "de"}
	etKey := accKey
	etKey.EventTypeID = a.EventTypeID

	_, err := st.GetTemplate(ctx, accKey)
	assert.ErrorIs(t, err, store.ErrNotFound)
	et, acc, err := st.TemplateLevels(ctx, a.AccountID, a.EventTypeID, templates.KindInvite, "de")
	require.NoError(t, err)
	assert.Nil(t, et)
	assert.Nil(t, acc)

	v1 := templates.Content{Subject: "S1", Heading: "H", Body: "B", ButtonLabel: "L"}
	tpl, created, err := st.PutTemplate(ctx, accKey, v1, "cli-1")
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, 1, tpl.Version)
	assert.Equal(t, v1, tpl.Content)
	assert.Empty(t, tpl.EventTypeID)
	assert.True(t, store.ValidID("tpl", tpl.ID))

	v2 := v1
	v2.Subject = "S2"
	tpl2, created, err := st.PutTemplate(ctx, accKey, v2, "cli-1")
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, 2, tpl2.Version)
	assert.Equal(t, tpl.ID, tpl2.ID, "the same template, a new version")
	assert.Equal(t, tpl.CreatedAt, tpl2.CreatedAt)

	etTpl, created, err := st.PutTemplate(ctx, etKey, v1, "cli-1")
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, 1, etTpl.Version, "each level counts its own versions")
	assert.Equal(t, a.EventTypeID, etTpl.EventTypeID)

	et, acc, err = st.TemplateLevels(ctx, a.AccountID, a.EventTypeID, templates.KindInvite, "de")
	require.NoError(t, err)
	assert.Equal(t, &templates.Stored{Content: v1, Version: 1}, et)
	assert.Equal(t, &templates.Stored{Content: v2, Version: 2}, acc)
	// Another kind or language has none.
	et, acc, err = st.TemplateLevels(ctx, a.AccountID, a.EventTypeID, templates.KindReminder, "de")
	require.NoError(t, err)
	assert.Nil(t, et)
	assert.Nil(t, acc)

	// At send time: the event type's wins, then the account's.
	ev := a.Event(t, eventfixture.Event{})
	got, err := st.LoadEventTemplate(ctx, ev, templates.KindInvite, "de")
	require.NoError(t, err)
	assert.Equal(t, templates.SourceEventType, got.Chosen.Source)
	assert.Equal(t, 1, got.Chosen.Version)
	assert.NotEmpty(t, got.OrderReference)
	assert.NotEmpty(t, got.EventType)
	require.NoError(t, st.DeleteTemplate(ctx, etKey))
	got, err = st.LoadEventTemplate(ctx, ev, templates.KindInvite, "de")
	require.NoError(t, err)
	assert.Equal(t, templates.SourceAccount, got.Chosen.Source)
	assert.Equal(t, 2, got.Chosen.Version)
	assert.Equal(t, "S2", got.Chosen.Content.Subject)
	require.NoError(t, st.DeleteTemplate(ctx, accKey))
	got, err = st.LoadEventTemplate(ctx, ev, templates.KindInvite, "de")
	require.NoError(t, err)
	assert.Equal(t, templates.Chosen{Source: templates.SourceBuiltin}, got.Chosen)
	assert.ErrorIs(t, st.DeleteTemplate(ctx, accKey), store.ErrNotFound)
	_, err = st.LoadEventTemplate(ctx, store.NewID("evt"), templates.KindInvite, "de")
	assert.ErrorIs(t, err, store.ErrNotFound)

	// Versions count on after a delete: a number names one text forever.
	tpl3, created, err := st.PutTemplate(ctx, accKey, v1, "cli-1")
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, 3, tpl3.Version)
	var kept int
	require.NoError(t, st.DB().Get(&kept, `SELECT count(*) FROM message_template_versions WHERE account_id = $1 AND deleted_at IS NOT NULL`, a.AccountID))
	assert.Equal(t, 2, kept, "the deleted versions stay on record")
}

func TestTemplatesOfAnotherAccount(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a, b := account(eventfixture.Setting{}), account(eventfixture.Setting{})
	key := store.TemplateKey{AccountID: a.AccountID, EventTypeID: b.EventTypeID, Kind: templates.KindInvite, Locale: "en"}
	c := templates.Content{Subject: "S", Heading: "H", Body: "B", ButtonLabel: "L"}
	_, _, err := st.PutTemplate(ctx, key, c, "cli")
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = st.GetTemplate(ctx, key)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, _, err = st.TemplateLevels(ctx, a.AccountID, b.EventTypeID, templates.KindInvite, "en")
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = st.CreateTestSend(ctx, store.TestSend{AccountID: a.AccountID, EventTypeID: b.EventTypeID, Kind: templates.KindInvite,
		Locale: "en", Address: "x@example.com", MaskedAddress: "x***@example.com", CreatedBy: "cli"})
	assert.ErrorIs(t, err, store.ErrNotFound)

	// b's template does not show for a, in a list or at send time.
	_, _, err = st.PutTemplate(ctx, store.TemplateKey{AccountID: b.AccountID, Kind: templates.KindInvite, Locale: "en"}, c, "cli")
	require.NoError(t, err)
	list, _, err := st.ListTemplates(ctx, a.AccountID, store.TemplateFilter{}, store.Page{Limit: 50})
	require.NoError(t, err)
	assert.Empty(t, list)
	got, err := st.LoadEventTemplate(ctx, a.Event(t, eventfixture.Event{}), templates.KindInvite, "en")
	require.NoError(t, err)
	assert.Equal(t, templates.SourceBuiltin, got.Chosen.Source)
}

func TestListTemplates(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	c := templates.Content{Subject: "S", Heading: "H", Body: "B", ButtonLabel: "L"}
	var ids []string
	for _, k := range []store.TemplateKey{
		{AccountID: a.AccountID, Kind: templates.KindInvite, Locale: "en"},
		{AccountID: a.AccountID, Kind: templates.KindReminder, Locale: "en"},
		{AccountID: a.AccountID, Kind: templates.KindInvite, Locale: "fr"},
		{AccountID: a.AccountID, EventTypeID: a.EventTypeID, Kind: templates.KindInvite, Locale: "en"},
	} {
		tpl, _, err := st.PutTemplate(ctx, k, c, "cli")
		require.NoError(t, err)
		ids = append(ids, tpl.ID)
	}
	var got []string
	var next *store.Cursor
	for {
		page, n, err := st.ListTemplates(ctx, a.AccountID, store.TemplateFilter{}, store.Page{Limit: 3, After: next})
		require.NoError(t, err)
		for _, p := range page {
			got = append(got, p.ID)
		}
		if next = n; next == nil {
			break
		}
	}
	assert.ElementsMatch(t, ids, got)
	for f, n := range map[store.TemplateFilter]int{
		{Kind: templates.KindInvite}:               3,
		{Locale: "fr"}:                             1,
		{EventTypeID: a.EventTypeID}:               1,
		{AccountOnly: true}:                        3,
		{Kind: templates.KindSMSInvite}:            0,
		{Kind: templates.KindInvite, Locale: "en"}: 2,
	} {
		list, _, err := st.ListTemplates(ctx, a.AccountID, f, store.Page{Limit: 50})
		require.NoError(t, err)
		assert.Len(t, list, n, "%+v", f)
	}
}

// TestConcurrentTemplateWrites: writers of one template queue, so every
// write gets its own version and none is lost.
func TestConcurrentTemplateWrites(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	key := store.TemplateKey{AccountID: a.AccountID, Kind: templates.KindSMSInvite, Locale: "nl"}
	var wg sync.WaitGroup
	versions := make([]int, 8)
	for i := range versions {
		wg.Go(func() {
			tpl, _, err := st.PutTemplate(ctx, key, templates.Content{Text: "x"}, "cli")
			assert.NoError(t, err)
			versions[i] = tpl.Version
		})
	}
	wg.Wait()
	assert.ElementsMatch(t, []int{1, 2, 3, 4, 5, 6, 7, 8}, versions)
}

func TestTestSendLimits(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	clock := time.Date(2026, 5, 4, 23, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return clock })
	st.Accounts.Quotas.DailySends = 1000
	a := account(eventfixture.Setting{})
	send := func() (store.TestSend, error) {
		return st.CreateTestSend(ctx, store.TestSend{AccountID: a.AccountID, Kind: templates.KindInvite, Locale: "en",
			Address: "owner@shop.example", MaskedAddress: "o***@shop.example", CreatedBy: "cli"})
	}
	// Twenty a day, counted also as sends of the day.
	var wg sync.WaitGroup
	errs := make([]error, store.TestSendsPerDay+5)
	for i := range errs {
		wg.Go(func() { _, errs[i] = send() })
	}
	wg.Wait()
	var ok, refused int
	for _, err := range errs {
		var q *accountdb.QuotaError
		switch {
		case err == nil:
			ok++
		case assert.ErrorAs(t, err, &q):
			assert.Equal(t, store.QuotaTestSends, q.Kind)
			assert.Equal(t, store.TestSendsPerDay, q.Limit)
			refused++
		}
	}
	assert.Equal(t, store.TestSendsPerDay, ok)
	assert.Equal(t, 5, refused)
	var counted int
	require.NoError(t, st.DB().Get(&counted, `SELECT sends FROM account_daily_sends WHERE account_id = $1`, a.AccountID))
	assert.Equal(t, store.TestSendsPerDay, counted, "each test counts against the send quota")

	// A new UTC day, a new allowance; the daily send quota applies too.
	clock = clock.Add(2 * time.Hour)
	_, err := st.Accounts.SetAccountQuotas(ctx, a.AccountID, accountdb.QuotaUpdate{DailySends: new(2)})
	require.NoError(t, err)
	first, err := send()
	require.NoError(t, err)
	assert.Equal(t, store.TestSendPending, first.Status)
	starts, err := st.ClaimTestSendStarts(ctx, 100)
	require.NoError(t, err)
	var ids []string
	for _, s := range starts.Starts {
		ids = append(ids, s.ID)
	}
	assert.Contains(t, ids, first.ID, "a test send is the order to start its workflow")
	require.NoError(t, starts.Finish(ctx, ids, nil))
	starts, err = st.ClaimTestSendStarts(ctx, 100)
	require.NoError(t, err)
	assert.Empty(t, starts.Starts, "started once")
	require.NoError(t, starts.Release())
	_, err = send()
	require.NoError(t, err)
	_, err = send()
	var q *accountdb.QuotaError
	require.ErrorAs(t, err, &q)
	assert.Equal(t, accountdb.QuotaDailySends, q.Kind)
	assert.Equal(t, 2, q.Limit)

}

func TestFinishTestSendForgetsTheAddress(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	ts, err := st.CreateTestSend(ctx, store.TestSend{AccountID: a.AccountID, EventTypeID: a.EventTypeID, Kind: templates.KindSMSInvite,
		Locale: "de", Address: "+4915112345678", MaskedAddress: "***5678", CreatedBy: "cli-7"})
	require.NoError(t, err)
	loaded, err := st.LoadTestSend(ctx, ts.ID)
	require.NoError(t, err)
	assert.Equal(t, "+4915112345678", loaded.Address)
	assert.Equal(t, a.EventTypeID, loaded.EventTypeID)

	done, err := st.FinishTestSend(ctx, ts.ID, templates.Chosen{Source: templates.SourceAccount, Version: 4}, "")
	require.NoError(t, err)
	assert.Equal(t, store.TestSendSent, done.Status)
	assert.Empty(t, done.Address)
	assert.Equal(t, "***5678", done.MaskedAddress)
	assert.Equal(t, "account", done.TemplateSource)
	assert.Equal(t, 4, done.TemplateVersion)
	require.NotNil(t, done.FinishedAt)

	again, err := st.FinishTestSend(ctx, ts.ID, templates.Chosen{Source: templates.SourceBuiltin}, "boom")
	require.NoError(t, err)
	assert.Equal(t, done, again, "an ended test stays as it ended")
	_, err = st.GetTestSend(ctx, store.NewID("acc"), ts.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "another account's")
}

// TestTestSendReachesOnlyWhomAnInviteMay: a test send is refused for an
// address on the account's suppression list, whatever its case, and
// counts against the daily cap of sends to its address, which the
// account's invites count too — each takes from the other's allowance.
func TestTestSendReachesOnlyWhomAnInviteMay(t *testing.T) {
	t.Parallel()
	st, account, _, refused := quotaStore(t, accountdb.Quotas{RecipientDailyCap: 2, DailySends: 100})
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	test := func(kind templates.Kind, to string) (store.TestSend, error) {
		return st.CreateTestSend(ctx, store.TestSend{AccountID: a.AccountID, Kind: kind, Locale: "en",
			Address: to, MaskedAddress: "x***", CreatedBy: "cli"})
	}

	for address, medium := range map[string]invite.Medium{"gone@shop.example": invite.Email, "+4915112345678": invite.SMS} {
		_, _, err := st.AddSuppression(ctx, a.AccountID, address, medium, invite.Unsubscribed, "")
		require.NoError(t, err)
	}
	for to, kind := range map[string]templates.Kind{"Gone@Shop.example": templates.KindInvite, "+4915112345678": templates.KindSMSInvite} {
		_, err := test(kind, to)
		var sup *store.SuppressedError
		require.ErrorAs(t, err, &sup, to)
		assert.Equal(t, invite.Unsubscribed, sup.Reason)
	}
	var counted int
	require.NoError(t, st.DB().Get(&counted, `SELECT count(*) FROM account_daily_sends WHERE account_id = $1`, a.AccountID))
	assert.Zero(t, counted, "a refused test counts nothing")

	// An invite and a test share the cap of two.
	require.True(t, claimOne(t, st, a.Event(t, eventfixture.Event{Email: "jane@shop.example", Status: invite.Scheduled}), false).Send)
	_, err := test(templates.KindReminder, "Jane@Shop.example")
	require.NoError(t, err)
	_, err = test(templates.KindInvite, "jane@shop.example")
	var q *accountdb.QuotaError
	require.ErrorAs(t, err, &q)
	assert.Equal(t, accountdb.QuotaRecipient, q.Kind)
	assert.Equal(t, 2, q.Limit)
	c := claimOne(t, st, a.Event(t, eventfixture.Event{Email: "jane@shop.example", Status: invite.Scheduled}), false)
	assert.False(t, c.Send, "the test took the invite's last send to the address")
	assert.Equal(t, invite.QuotaExceeded, c.State.Reason)
	assert.Equal(t, map[string]int{accountdb.QuotaRecipient: 2}, refused.get())

	// The cap is per address: another address, or her number, still gets a test.
	_, err = test(templates.KindInvite, "john@shop.example")
	require.NoError(t, err)
	_, err = test(templates.KindSMSInvite, "+4915199999999")
	require.NoError(t, err)
}
