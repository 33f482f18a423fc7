package templatedb_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/webhookfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/store/templatedb"
)

// The store keeps a template's kind (a templates.Kind) and its content as
// the caller encoded it (templates.EncodeContent): the tests give it
// both as plain values.
const (
	kindInvite    = "invite"
	kindReminder  = "reminder"
	kindSMSInvite = "sms_invite"
	mailContent   = `{"subject": "S", "heading": "H", "body": "B", "buttonLabel": "L"}`
)

// inviteStore returns a store on a fresh database and a maker of fixture
// accounts in it.
func inviteStore(t *testing.T) (*store.Store, func(eventfixture.Setting) *eventfixture.Account) {
	t.Helper()
	st, _, account := webhookfixture.Store(t)
	return st, account
}

func TestTemplateVersionsAndLevels(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	accKey := templatedb.TemplateKey{AccountID: a.AccountID, Kind: kindInvite, Locale: "de"}
	etKey := accKey
	etKey.EventTypeID = a.EventTypeID

	_, err := st.Templates.GetTemplate(ctx, accKey)
	assert.ErrorIs(t, err, store.ErrNotFound)
	et, acc, err := st.Templates.TemplateLevels(ctx, a.AccountID, a.EventTypeID, kindInvite, "de")
	require.NoError(t, err)
	assert.Zero(t, et)
	assert.Zero(t, acc)

	v1 := []byte(`{"subject": "S1", "heading": "H", "body": "B", "buttonLabel": "L"}`)
	tpl, created, err := st.Templates.PutTemplate(ctx, accKey, v1, "cli-1")
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, 1, tpl.Version)
	assert.JSONEq(t, string(v1), string(tpl.Content))
	assert.Empty(t, tpl.EventTypeID)
	assert.True(t, store.ValidID("tpl", tpl.ID))

	v2 := []byte(`{"subject": "S2", "heading": "H", "body": "B", "buttonLabel": "L"}`)
	tpl2, created, err := st.Templates.PutTemplate(ctx, accKey, v2, "cli-1")
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, 2, tpl2.Version)
	assert.Equal(t, tpl.ID, tpl2.ID, "the same template, a new version")
	assert.Equal(t, tpl.CreatedAt, tpl2.CreatedAt)

	etTpl, created, err := st.Templates.PutTemplate(ctx, etKey, v1, "cli-1")
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, 1, etTpl.Version, "each level counts its own versions")
	assert.Equal(t, a.EventTypeID, etTpl.EventTypeID)

	et, acc, err = st.Templates.TemplateLevels(ctx, a.AccountID, a.EventTypeID, kindInvite, "de")
	require.NoError(t, err)
	assert.Equal(t, 1, et.Version)
	assert.JSONEq(t, string(v1), string(et.Content))
	assert.Equal(t, 2, acc.Version)
	assert.JSONEq(t, string(v2), string(acc.Content))
	// Another kind or language has none.
	et, acc, err = st.Templates.TemplateLevels(ctx, a.AccountID, a.EventTypeID, kindReminder, "de")
	require.NoError(t, err)
	assert.Zero(t, et)
	assert.Zero(t, acc)

	// At send time: both levels of the event, to choose from.
	ev := a.Event(t, eventfixture.Event{})
	got, err := st.Templates.LoadEventTemplate(ctx, ev, kindInvite, "de")
	require.NoError(t, err)
	assert.Equal(t, 1, got.ForEventType.Version)
	assert.Equal(t, 2, got.ForAccount.Version)
	assert.NotEmpty(t, got.OrderReference)
	assert.NotEmpty(t, got.EventType)
	require.NoError(t, st.Templates.DeleteTemplate(ctx, etKey))
	got, err = st.Templates.LoadEventTemplate(ctx, ev, kindInvite, "de")
	require.NoError(t, err)
	assert.Zero(t, got.ForEventType)
	assert.Equal(t, 2, got.ForAccount.Version)
	assert.JSONEq(t, string(v2), string(got.ForAccount.Content))
	require.NoError(t, st.Templates.DeleteTemplate(ctx, accKey))
	got, err = st.Templates.LoadEventTemplate(ctx, ev, kindInvite, "de")
	require.NoError(t, err)
	assert.Zero(t, got.ForEventType)
	assert.Zero(t, got.ForAccount)
	assert.ErrorIs(t, st.Templates.DeleteTemplate(ctx, accKey), store.ErrNotFound)
	_, err = st.Templates.LoadEventTemplate(ctx, store.NewID("evt"), kindInvite, "de")
	assert.ErrorIs(t, err, store.ErrNotFound)

	// Versions count on after a delete: a number names one text forever.
	tpl3, created, err := st.Templates.PutTemplate(ctx, accKey, v1, "cli-1")
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
	key := templatedb.TemplateKey{AccountID: a.AccountID, EventTypeID: b.EventTypeID, Kind: kindInvite, Locale: "en"}
	c := []byte(mailContent)
	_, _, err := st.Templates.PutTemplate(ctx, key, c, "cli")
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = st.Templates.GetTemplate(ctx, key)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, _, err = st.Templates.TemplateLevels(ctx, a.AccountID, b.EventTypeID, kindInvite, "en")
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = st.Templates.CreateTestSend(ctx, templatedb.TestSend{AccountID: a.AccountID, EventTypeID: b.EventTypeID, Kind: kindInvite,
		Locale: "en", Address: "x@example.com", MaskedAddress: "x***@example.com", CreatedBy: "cli"}, invite.Email)
	assert.ErrorIs(t, err, store.ErrNotFound)

	// b's template does not show for a, in a list or at send time.
	_, _, err = st.Templates.PutTemplate(ctx, templatedb.TemplateKey{AccountID: b.AccountID, Kind: kindInvite, Locale: "en"}, c, "cli")
	require.NoError(t, err)
	list, _, err := st.Templates.ListTemplates(ctx, a.AccountID, templatedb.TemplateFilter{}, store.Page{Limit: 50})
	require.NoError(t, err)
	assert.Empty(t, list)
	got, err := st.Templates.LoadEventTemplate(ctx, a.Event(t, eventfixture.Event{}), kindInvite, "en")
	require.NoError(t, err)
	assert.Zero(t, got.ForEventType)
	assert.Zero(t, got.ForAccount)
}

func TestListTemplates(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	c := []byte(mailContent)
	var ids []string
	for _, k := range []templatedb.TemplateKey{
		{AccountID: a.AccountID, Kind: kindInvite, Locale: "en"},
		{AccountID: a.AccountID, Kind: kindReminder, Locale: "en"},
		{AccountID: a.AccountID, Kind: kindInvite, Locale: "fr"},
		{AccountID: a.AccountID, EventTypeID: a.EventTypeID, Kind: kindInvite, Locale: "en"},
	} {
		tpl, _, err := st.Templates.PutTemplate(ctx, k, c, "cli")
		require.NoError(t, err)
		ids = append(ids, tpl.ID)
	}
	var got []string
	var next *store.Cursor
	for {
		page, n, err := st.Templates.ListTemplates(ctx, a.AccountID, templatedb.TemplateFilter{}, store.Page{Limit: 3, After: next})
		require.NoError(t, err)
		for _, p := range page {
			got = append(got, p.ID)
		}
		if next = n; next == nil {
			break
		}
	}
	assert.ElementsMatch(t, ids, got)
	for f, n := range map[templatedb.TemplateFilter]int{
		{Kind: kindInvite}:               3,
		{Locale: "fr"}:                   1,
		{EventTypeID: a.EventTypeID}:     1,
		{AccountOnly: true}:              3,
		{Kind: kindSMSInvite}:            0,
		{Kind: kindInvite, Locale: "en"}: 2,
	} {
		list, _, err := st.Templates.ListTemplates(ctx, a.AccountID, f, store.Page{Limit: 50})
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
	key := templatedb.TemplateKey{AccountID: a.AccountID, Kind: kindSMSInvite, Locale: "nl"}
	var wg sync.WaitGroup
	versions := make([]int, 8)
	for i := range versions {
		wg.Go(func() {
			tpl, _, err := st.Templates.PutTemplate(ctx, key, []byte(`{"text": "x"}`), "cli")
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
	send := func() (templatedb.TestSend, error) {
		return st.Templates.CreateTestSend(ctx, templatedb.TestSend{AccountID: a.AccountID, Kind: kindInvite, Locale: "en",
			Address: "owner@shop.example", MaskedAddress: "o***@shop.example", CreatedBy: "cli"}, invite.Email)
	}
	// Twenty a day, counted also as sends of the day.
	var wg sync.WaitGroup
	errs := make([]error, templatedb.TestSendsPerDay+5)
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
			assert.Equal(t, templatedb.QuotaTestSends, q.Kind)
			assert.Equal(t, templatedb.TestSendsPerDay, q.Limit)
			refused++
		}
	}
	assert.Equal(t, templatedb.TestSendsPerDay, ok)
	assert.Equal(t, 5, refused)
	var counted int
	require.NoError(t, st.DB().Get(&counted, `SELECT sends FROM account_daily_sends WHERE account_id = $1`, a.AccountID))
	assert.Equal(t, templatedb.TestSendsPerDay, counted, "each test counts against the send quota")

	// A new UTC day, a new allowance; the daily send quota applies too.
	clock = clock.Add(2 * time.Hour)
	_, err := st.Accounts.SetAccountQuotas(ctx, a.AccountID, accountdb.QuotaUpdate{DailySends: new(2)})
	require.NoError(t, err)
	first, err := send()
	require.NoError(t, err)
	assert.Equal(t, templatedb.TestSendPending, first.Status)
	starts, err := st.Templates.ClaimTestSendStarts(ctx, 100)
	require.NoError(t, err)
	var ids []string
	for _, s := range starts.Starts {
		ids = append(ids, s.ID)
	}
	assert.Contains(t, ids, first.ID, "a test send is the order to start its workflow")
	require.NoError(t, starts.Finish(ctx, ids, nil))
	starts, err = st.Templates.ClaimTestSendStarts(ctx, 100)
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
	ts, err := st.Templates.CreateTestSend(ctx, templatedb.TestSend{AccountID: a.AccountID, EventTypeID: a.EventTypeID, Kind: kindSMSInvite,
		Locale: "de", Address: "+4915112345678", MaskedAddress: "***5678", CreatedBy: "cli-7"}, invite.SMS)
	require.NoError(t, err)
	loaded, err := st.Templates.LoadTestSend(ctx, ts.ID)
	require.NoError(t, err)
	assert.Equal(t, "+4915112345678", loaded.Address)
	assert.Equal(t, a.EventTypeID, loaded.EventTypeID)

	done, err := st.Templates.FinishTestSend(ctx, ts.ID, "account", 4, "")
	require.NoError(t, err)
	assert.Equal(t, templatedb.TestSendSent, done.Status)
	assert.Empty(t, done.Address)
	assert.Equal(t, "***5678", done.MaskedAddress)
	assert.Equal(t, "account", done.TemplateSource)
	assert.Equal(t, 4, done.TemplateVersion)
	require.NotNil(t, done.FinishedAt)

	again, err := st.Templates.FinishTestSend(ctx, ts.ID, "builtin", 0, "boom")
	require.NoError(t, err)
	assert.Equal(t, done, again, "an ended test stays as it ended")
	_, err = st.Templates.GetTestSend(ctx, store.NewID("acc"), ts.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "another account's")
}

// TestTestSendReachesOnlyWhomAnInviteMay: a test send is refused for an
// address on the account's suppression list, whatever its case, and
// counts against the daily cap of sends to its address, which the
// account's invites count too — each takes from the other's allowance.
func TestTestSendReachesOnlyWhomAnInviteMay(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	st.Accounts.Quotas = accountdb.Quotas{RecipientDailyCap: 2, DailySends: 100}
	st.SetClock(func() time.Time { return time.Date(2026, 6, 1, 23, 0, 0, 0, time.UTC) })
	var (
		mu      sync.Mutex
		refused = map[string]int{}
	)
	st.Accounts.OnQuotaExceeded = func(kind string) { mu.Lock(); defer mu.Unlock(); refused[kind]++ }
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	test := func(kind string, medium invite.Medium, to string) (templatedb.TestSend, error) {
		return st.Templates.CreateTestSend(ctx, templatedb.TestSend{AccountID: a.AccountID, Kind: kind, Locale: "en",
			Address: to, MaskedAddress: "x***", CreatedBy: "cli"}, medium)
	}
	claim := func(email string) invitedb.Claim {
		t.Helper()
		id := a.Event(t, eventfixture.Event{Email: email, Status: invite.Scheduled})
		c, err := st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{})
		require.NoError(t, err)
		return c
	}

	for address, medium := range map[string]invite.Medium{"gone@shop.example": invite.Email, "+4915112345678": invite.SMS} {
		_, _, err := st.Suppressions.AddSuppression(ctx, a.AccountID, address, medium, invite.Unsubscribed, "")
		require.NoError(t, err)
	}
	for _, x := range []struct {
		to, kind string
		medium   invite.Medium
	}{{"Gone@Shop.example", kindInvite, invite.Email}, {"+4915112345678", kindSMSInvite, invite.SMS}} {
		_, err := test(x.kind, x.medium, x.to)
		var sup *suppressiondb.SuppressedError
		require.ErrorAs(t, err, &sup, x.to)
		assert.Equal(t, invite.Unsubscribed, sup.Reason)
	}
	var counted int
	require.NoError(t, st.DB().Get(&counted, `SELECT count(*) FROM account_daily_sends WHERE account_id = $1`, a.AccountID))
	assert.Zero(t, counted, "a refused test counts nothing")

	// An invite and a test share the cap of two.
	require.True(t, claim("jane@shop.example").Send)
	_, err := test(kindReminder, invite.Email, "Jane@Shop.example")
	require.NoError(t, err)
	_, err = test(kindInvite, invite.Email, "jane@shop.example")
	var q *accountdb.QuotaError
	require.ErrorAs(t, err, &q)
	assert.Equal(t, accountdb.QuotaRecipient, q.Kind)
	assert.Equal(t, 2, q.Limit)
	c := claim("jane@shop.example")
	assert.False(t, c.Send, "the test took the invite's last send to the address")
	assert.Equal(t, invite.QuotaExceeded, c.State.Reason)
	mu.Lock()
	assert.Equal(t, map[string]int{accountdb.QuotaRecipient: 2}, refused)
	mu.Unlock()

	// The cap is per address: another address, or her number, still gets a test.
	_, err = test(kindInvite, invite.Email, "john@shop.example")
	require.NoError(t, err)
	_, err = test(kindSMSInvite, invite.SMS, "+4915199999999")
	require.NoError(t, err)
}
