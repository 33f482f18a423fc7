package invitedb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sendtime"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/storeset"
)

// inviteStore returns a store on a fresh database and a maker of fixture
// accounts in it.
func inviteStore(t *testing.T) (*store.Store, func(eventfixture.Setting) *eventfixture.Account) {
	t.Helper()
	db := testdb.New(t)
	st := storeset.New(db, "P7D")
	return st, func(s eventfixture.Setting) *eventfixture.Account {
		return eventfixture.NewAccount(t, db, s)
	}
}

// claimSend claims the send of a scheduled invite, which must go out.
func claimSend(t *testing.T, st *store.Store, id string) invitedb.Claim {
	t.Helper()
	c, err := st.Invites.ClaimSend(context.Background(), invite.KindInvite, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send)
	return c
}

func TestLoadInvitePlan(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{Delay: "P3D", DelayFrom: "delivery", SendWindow: `{"start":"09:00","end":"17:00","timeZone":"Europe/Berlin"}`})
	received := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	id := a.Event(t, eventfixture.Event{ReceivedAt: received, TransactionDate: received.Add(-time.Hour), DeliveryDate: "2026-05-04"})

	p, err := st.Invites.LoadPlan(ctx, invite.KindInvite, id)
	require.NoError(t, err)
	assert.Equal(t, invite.Plan{
		Status: invite.Pending, EventTypeActive: true, SettingActive: true,
		Plan: sendtime.Plan{
			ReceivedAt: received, TransactionDate: received.Add(-time.Hour), DeliveryDate: "2026-05-04",
			Delay: "P3D", DelayFrom: "delivery",
			SendWindow: &sendtime.SendWindow{Start: "09:00", End: "17:00", TimeZone: "Europe/Berlin"},
		},
	}, p)

	a.Set(t, "active", false)
	p, err = st.Invites.LoadPlan(ctx, invite.KindInvite, id)
	require.NoError(t, err)
	assert.False(t, p.SettingActive)

	inactiveType := account(eventfixture.Setting{EventTypeInactive: true})
	p, err = st.Invites.LoadPlan(ctx, invite.KindInvite, inactiveType.Event(t, eventfixture.Event{}))
	require.NoError(t, err)
	assert.False(t, p.EventTypeActive)
	assert.Nil(t, p.Plan.SendWindow)
	assert.Empty(t, p.Plan.DeliveryDate)

	_, err = st.Invites.LoadPlan(ctx, invite.KindInvite, store.NewID("evt"))
	assert.ErrorIs(t, err, store.ErrNotFound)
}

func TestInviteTransitions(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	at := time.Date(2026, 5, 8, 10, 0, 0, 123456789, time.UTC)

	type step func(id string) (invite.State, error)
	schedule := func(id string) (invite.State, error) { return st.Invites.MarkScheduled(ctx, invite.KindInvite, id, at) }
	skip := func(id string) (invite.State, error) {
		return st.Invites.MarkSkipped(ctx, invite.KindInvite, id, invite.EventTypeInactive)
	}
	cancel := func(id string) (invite.State, error) { return st.Invites.MarkCancelled(ctx, invite.KindInvite, id) }
	fail := func(id string) (invite.State, error) {
		return st.Invites.GiveUp(ctx, invite.KindInvite, id, invite.RetriesExhausted, "451 try again later")
	}
	tests := []struct {
		name       string
		from       invite.Status
		do         step
		want       invite.Status
		wantReason invite.Reason
	}{
		{"schedule pending", invite.Pending, schedule, invite.Scheduled, ""},
		{"schedule failed (retry run)", invite.Failed, schedule, invite.Scheduled, ""},
		{"schedule scheduled (idempotent)", invite.Scheduled, schedule, invite.Scheduled, ""},
		{"schedule cancelled: stays", invite.Cancelled, schedule, invite.Cancelled, ""},
		{"schedule sent: stays", invite.Sent, schedule, invite.Sent, ""},
		{"schedule sending: stays", invite.Sending, schedule, invite.Sending, ""},
		{"skip pending", invite.Pending, skip, invite.Skipped, invite.EventTypeInactive},
		{"skip cancelled: stays", invite.Cancelled, skip, invite.Cancelled, ""},
		{"skip sent: stays", invite.Sent, skip, invite.Sent, ""},
		{"cancel pending", invite.Pending, cancel, invite.Cancelled, ""},
		{"cancel scheduled", invite.Scheduled, cancel, invite.Cancelled, ""},
		{"cancel sending: too late", invite.Sending, cancel, invite.Sending, ""},
		{"cancel sent: too late", invite.Sent, cancel, invite.Sent, ""},
		{"fail scheduled", invite.Scheduled, fail, invite.Failed, invite.RetriesExhausted},
		{"fail sending: uncertain", invite.Sending, fail, invite.Failed, invite.DeliveryUncertain},
		{"fail sent: stays", invite.Sent, fail, invite.Sent, ""},
		{"fail skipped: stays", invite.Skipped, fail, invite.Skipped, ""},
	}
	for _, tc := range tests {
		id := a.Event(t, eventfixture.Event{Status: tc.from})
		got, err := tc.do(id)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got.Status, tc.name)
		assert.Equal(t, tc.wantReason, got.Reason, tc.name)
		stored, err := st.Invites.LoadInviteState(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, got, stored, "%s: the returned state is the stored one", tc.name)
	}

	id := a.Event(t, eventfixture.Event{})
	got, err := schedule(id)
	require.NoError(t, err)
	require.NotNil(t, got.ScheduledFor)
	assert.Equal(t, at.Truncate(time.Millisecond), *got.ScheduledFor)

	_, err = st.Invites.MarkScheduled(ctx, invite.KindInvite, store.NewID("evt"), at)
	assert.ErrorIs(t, err, store.ErrNotFound)
}

func TestClaimInviteSend(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	claim := func(id string, smsEnabled bool) invitedb.Claim {
		t.Helper()
		c, err := st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{SMSEnabled: smsEnabled, Mobile: "+4915112345678"})
		require.NoError(t, err)
		return c
	}
	a := account(eventfixture.Setting{})

	t.Run("a scheduled invite is marked sending, once", func(t *testing.T) {
		id := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
		c := claim(id, false)
		assert.True(t, c.Send)
		assert.Equal(t, invite.Sending, c.State.Status)
		assert.Equal(t, 1, c.State.Attempts)
		assert.Equal(t, invite.Email, c.State.Medium)

		// The attempt crashed mid-send; the next one finds its mark.
		c = claim(id, false)
		assert.False(t, c.Send)
		assert.Equal(t, invite.Failed, c.State.Status)
		assert.Equal(t, invite.DeliveryUncertain, c.State.Reason)
		assert.NotEmpty(t, c.State.LastError)
	})
	t.Run("other states are left alone", func(t *testing.T) {
		for _, status := range []invite.Status{invite.Pending, invite.Cancelled, invite.Sent, invite.Skipped, invite.Failed} {
			c := claim(a.Event(t, eventfixture.Event{Status: status}), false)
			assert.False(t, c.Send, status)
			assert.Equal(t, status, c.State.Status)
		}
	})
	t.Run("no address", func(t *testing.T) {
		c := claim(a.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: eventfixture.NoEmail}), false)
		assert.False(t, c.Send)
		assert.Equal(t, invite.Skipped, c.State.Status)
		assert.Equal(t, invite.NoAddress, c.State.Reason)
	})
	t.Run("setting deactivated while waiting", func(t *testing.T) {
		b := account(eventfixture.Setting{})
		id := b.Event(t, eventfixture.Event{Status: invite.Scheduled})
		b.Set(t, "active", false)
		c := claim(id, false)
		assert.Equal(t, invite.Skipped, c.State.Status)
		assert.Equal(t, invite.SettingInactive, c.State.Reason)
	})
	t.Run("event type inactive", func(t *testing.T) {
		b := account(eventfixture.Setting{EventTypeInactive: true})
		c := claim(b.Event(t, eventfixture.Event{Status: invite.Scheduled}), false)
		assert.Equal(t, invite.Skipped, c.State.Status)
		assert.Equal(t, invite.EventTypeInactive, c.State.Reason)
	})
	t.Run("sms", func(t *testing.T) {
		b := account(eventfixture.Setting{Medium: invite.SMS})
		c, err := st.Invites.ClaimSend(ctx, invite.KindInvite, b.Event(t, eventfixture.Event{Status: invite.Scheduled}), invitedb.ClaimOptions{SMSEnabled: true})
		require.NoError(t, err)
		assert.Equal(t, invite.Skipped, c.State.Status, "no valid mobile number")
		assert.Equal(t, invite.NoAddress, c.State.Reason)

		c = claim(b.Event(t, eventfixture.Event{Status: invite.Scheduled, Mobile: "+4915112345678"}), false)
		assert.False(t, c.Send)
		assert.Equal(t, invite.Failed, c.State.Status, "no provider")
		assert.Equal(t, invite.NoProvider, c.State.Reason)
		assert.Equal(t, "no SMS provider configured", c.State.LastError)

		c = claim(b.Event(t, eventfixture.Event{Status: invite.Scheduled, Mobile: "+4915112345678"}), true)
		assert.True(t, c.Send)
		assert.Equal(t, invite.SMS, c.State.Medium)
		assert.Equal(t, "+4915112345678", c.Address)
	})
	t.Run("suppressed address, whatever its case and medium", func(t *testing.T) {
		b := account(eventfixture.Setting{})
		_, _, err := st.Suppressions.AddSuppression(ctx, b.AccountID, "jane.doe@example.com", invite.Email, invite.Unsubscribed, "")
		require.NoError(t, err)
		c := claim(b.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: "Jane.Doe@Example.COM"}), false)
		assert.False(t, c.Send)
		assert.Equal(t, invite.Skipped, c.State.Status)
		assert.Equal(t, invite.Suppressed, c.State.Reason)

		smsAccount := account(eventfixture.Setting{Medium: invite.SMS})
		_, _, err = st.Suppressions.AddSuppression(ctx, smsAccount.AccountID, "+4915112345678", invite.SMS, invite.Unsubscribed, "")
		require.NoError(t, err)
		c = claim(smsAccount.Event(t, eventfixture.Event{Status: invite.Scheduled, Mobile: "0151 12345678"}), true)
		assert.Equal(t, invite.Suppressed, c.State.Reason, "the number is compared in E.164")

		other := account(eventfixture.Setting{})
		assert.True(t, claim(other.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: "jane.doe@example.com"}), false).Send,
			"another account's list does not apply")
	})
}

func TestClaimThrottle(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return now })
	a := account(eventfixture.Setting{MinDays: 30})

	// Sent 29 days ago to the same address, written differently.
	a.Event(t, eventfixture.Event{Email: "JANE.DOE@example.com", Status: invite.Sent, SentAt: now.Add(-29 * 24 * time.Hour)})
	c, err := st.Invites.ClaimSend(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{Status: invite.Scheduled}), invitedb.ClaimOptions{})
	require.NoError(t, err)
	assert.False(t, c.Send)
	assert.Equal(t, invite.Skipped, c.State.Status)
	assert.Equal(t, invite.RecentlyInvited, c.State.Reason)

	// Another address, or the same one in another account, is not throttled.
	c, err = st.Invites.ClaimSend(ctx, invite.KindInvite, a.Event(t, eventfixture.Event{Email: "john@example.com", Status: invite.Scheduled}), invitedb.ClaimOptions{})
	require.NoError(t, err)
	assert.True(t, c.Send)
	b := account(eventfixture.Setting{MinDays: 30})
	c, err = st.Invites.ClaimSend(ctx, invite.KindInvite, b.Event(t, eventfixture.Event{Status: invite.Scheduled}), invitedb.ClaimOptions{})
	require.NoError(t, err)
	assert.True(t, c.Send)

	// After N × 24 h it may be invited again.
	old := account(eventfixture.Setting{MinDays: 30})
	old.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: now.Add(-30 * 24 * time.Hour)})
	c, err = st.Invites.ClaimSend(ctx, invite.KindInvite, old.Event(t, eventfixture.Event{Status: invite.Scheduled}), invitedb.ClaimOptions{})
	require.NoError(t, err)
	assert.True(t, c.Send)

	// 0 means no limit.
	unlimited := account(eventfixture.Setting{MinDays: 0})
	unlimited.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: now.Add(-time.Minute)})
	c, err = st.Invites.ClaimSend(ctx, invite.KindInvite, unlimited.Event(t, eventfixture.Event{Status: invite.Scheduled}), invitedb.ClaimOptions{})
	require.NoError(t, err)
	assert.True(t, c.Send)
}

func TestClaimSerialisesSendsToOneAddress(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	a := account(eventfixture.Setting{MinDays: 30})
	emails := []string{"jane@example.com", "Jane@Example.com", "JANE@EXAMPLE.COM", "jane@example.COM", "jAne@example.com", "jane@EXAMPLE.com"}
	var ids []string
	for _, e := range emails {
		ids = append(ids, a.Event(t, eventfixture.Event{Email: e, Status: invite.Scheduled}))
	}
	assert.Equal(t, 1, claimAtOnce(t, st, ids, invitedb.ClaimOptions{}), "one of the concurrent sends to an address goes out")
}

// claimAtOnce claims the sends of ids all at once and returns how many
// went out; every other was held back as recently invited.
func claimAtOnce(t *testing.T, st *store.Store, ids []string, opts invitedb.ClaimOptions) int {
	t.Helper()
	claims := make([]invitedb.Claim, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			c, err := st.Invites.ClaimSend(context.Background(), invite.KindInvite, id, opts)
			assert.NoError(t, err)
			claims[i] = c
		})
	}
	wg.Wait()
	sends := 0
	for _, c := range claims {
		if c.Send {
			sends++
			continue
		}
		assert.Equal(t, invite.RecentlyInvited, c.State.Reason)
	}
	return sends
}

func TestFinishInviteSend(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	ctx := context.Background()
	a := account(eventfixture.Setting{})
	sentAt := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	claimed := func() string {
		id := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
		claimSend(t, st, id)
		return id
	}

	got, err := st.Invites.FinishSend(ctx, invite.KindInvite, claimed(), invite.SendResult{SentAt: sentAt})
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, got.Status)
	assert.Equal(t, sentAt, *got.SentAt)

	id := claimed()
	got, err = st.Invites.FinishSend(ctx, invite.KindInvite, id, invite.SendResult{Retry: true, Error: "451 4.3.0 try again later"})
	require.NoError(t, err)
	assert.Equal(t, invite.Scheduled, got.Status)
	assert.Equal(t, "451 4.3.0 try again later", got.LastError)
	assert.Equal(t, 1, got.Attempts)
	c, err := st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	assert.True(t, c.Send, "a transient failure may be tried again")
	assert.Equal(t, 2, c.State.Attempts)

	got, err = st.Invites.FinishSend(ctx, invite.KindInvite, claimed(), invite.SendResult{Reason: invite.Rejected, Error: "550 5.1.1 unknown"})
	require.NoError(t, err)
	assert.Equal(t, invite.Failed, got.Status)
	assert.Equal(t, invite.Rejected, got.Reason)

	// Only a send in progress changes …
	cancelled := a.Event(t, eventfixture.Event{Status: invite.Cancelled})
	got, err = st.Invites.FinishSend(ctx, invite.KindInvite, cancelled, invite.SendResult{Retry: true, Error: "x"})
	require.NoError(t, err)
	assert.Equal(t, invite.Cancelled, got.Status)
	// … except that a delivery overrides a verdict of delivery_uncertain.
	id = claimed()
	_, err = st.Invites.GiveUp(ctx, invite.KindInvite, id, invite.RetriesExhausted, "timeout")
	require.NoError(t, err)
	got, err = st.Invites.FinishSend(ctx, invite.KindInvite, id, invite.SendResult{SentAt: sentAt})
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, got.Status)
}

func TestLoadInviteContent(t *testing.T) {
	t.Parallel()
	st, account := inviteStore(t)
	a := account(eventfixture.Setting{})
	id := a.Event(t, eventfixture.Event{Email: "Jane@Example.com", FirstName: "Jane", LastName: "Doe", Mobile: "+43 660 1234567",
		Locale: "de_AT", Products: []eventfixture.Product{{Name: "Shoe", SKU: "S-1", URL: "https://shop.example/s", ImageURL: "https://cdn.example/s.png"}}})
	acc, err := st.Accounts.UpdateBranding(context.Background(), a.AccountID, accountdb.BrandingUpdate{DisplayName: new("Nordlicht Outdoor"),
		ReplyTo: new("care@nordlicht.example")})
	require.NoError(t, err)
	c, err := st.Invites.LoadInviteContent(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, invitedb.InviteContent{
		EventID: id, AccountID: a.AccountID, Email: "Jane@Example.com", FirstName: "Jane", LastName: "Doe",
		Mobile: "+43 660 1234567", Locale: "de_AT",
		Products: []invitedb.InviteProduct{{Name: "Shoe", URL: "https://shop.example/s", ImageURL: "https://cdn.example/s.png"}},
		Account:  acc,
	}, c)
	assert.Equal(t, "Nordlicht Outdoor", c.Account.Brand().DisplayName)
	assert.Equal(t, "care@nordlicht.example", c.Account.Brand().ReplyTo)

	_, err = st.Invites.LoadInviteContent(context.Background(), store.NewID("evt"))
	assert.ErrorIs(t, err, store.ErrNotFound)
}

// TestInviteStepsOnATightPool runs the transitions of many invites at once
// on a fresh store whose pool has two connections. Preparing the steps'
// statements takes a pool connection; a transaction that did so while
// holding its own would leave the others waiting on each other until they
// time out.
func TestInviteStepsOnATightPool(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	db.SetMaxOpenConns(2)
	st := storeset.New(db, "P7D")
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	ids := make([]string, 16)
	for i := range ids {
		ids[i] = a.Event(t, eventfixture.Event{Email: fmt.Sprintf("customer%d@example.com", i)})
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	claims := make([]invitedb.Claim, len(ids))
	errs := make([]error, len(ids))
	for i, id := range ids {
		wg.Go(func() {
			if _, errs[i] = st.Invites.MarkScheduled(ctx, invite.KindInvite, id, time.Now()); errs[i] == nil {
				claims[i], errs[i] = st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{})
			}
		})
	}
	wg.Wait()
	for i := range ids {
		require.NoError(t, errs[i], "invite %d", i)
		assert.True(t, claims[i].Send, "invite %d: %+v", i, claims[i].State)
	}
}
