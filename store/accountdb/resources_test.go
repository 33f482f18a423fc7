package accountdb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sendtime"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

func newStore(t *testing.T) (*accountdb.Store, accountdb.Account, accountdb.Channel) {
	t.Helper()
	s := accountdb.New(pg.NewDB(testdb.New(t)), "P7D")
	acc, ch, err := s.CreateAccount(context.Background(), t.Name())
	require.NoError(t, err)
	return s, acc, ch
}

func TestInviteSettingsForEveryPair(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, acc, def := newStore(t)
	s.DefaultInviteDelay = "PT10S"

	et, err := s.CreateEventType(ctx, acc.ID, "checkout", true)
	require.NoError(t, err)
	assert.Equal(t, et.CreatedAt, et.UpdatedAt)
	assert.Equal(t, et.CreatedAt.Truncate(time.Millisecond), et.CreatedAt)

	settings, next, err := s.ListInviteSettings(ctx, acc.ID, accountdb.InviteSettingFilter{}, pg.Page{Limit: 10})
	require.NoError(t, err)
	assert.Nil(t, next)
	require.Len(t, settings, 1)
	is := settings[0]
	assert.Equal(t, def.ID, is.ChannelID)
	assert.Equal(t, et.ID, is.EventTypeID)
	assert.True(t, pg.ValidID("ist", is.ID), is.ID)
	assert.Equal(t, accountdb.InviteSetting{ID: is.ID, AccountID: acc.ID, ChannelID: def.ID, EventTypeID: et.ID,
		Active: true, Medium: "email", Delay: "PT10S", DelayFrom: "event", MinDaysBetweenInvites: 30,
		CreatedAt: et.CreatedAt, UpdatedAt: et.CreatedAt}, is)

	ch, err := s.CreateChannel(ctx, acc.ID, "Shop", "")
	require.NoError(t, err)
	assert.Equal(t, "native", ch.Type)
	got, err := s.InviteSettingFor(ctx, acc.ID, ch.ID, et.ID)
	require.NoError(t, err)
	assert.Equal(t, ch.CreatedAt, got.CreatedAt)

	_, err = s.CreateChannel(ctx, acc.ID, "Shop", "shopify")
	assert.ErrorIs(t, err, pg.ErrConflict)
	_, err = s.CreateEventType(ctx, acc.ID, "checkout", false)
	assert.ErrorIs(t, err, pg.ErrConflict)
	_, err = s.CreateEventType(ctx, "acc-00000000-0000-4000-8000-000000000000", "x", true)
	assert.ErrorIs(t, err, pg.ErrNotFound)

	all, _, err := s.ListInviteSettings(ctx, acc.ID, accountdb.InviteSettingFilter{}, pg.Page{})
	require.NoError(t, err)
	assert.Len(t, all, 2)
}

// Event types and channels created at the same time still get a setting
// for every pair: both lock the account first.
func TestConcurrentCreationCoversEveryPair(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, acc, _ := newStore(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := s.CreateEventType(ctx, acc.ID, fmt.Sprint("type-", i), true)
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := s.CreateChannel(ctx, acc.ID, fmt.Sprint("channel-", i), "api")
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var count int
	require.NoError(t, s.Pool().GetContext(ctx, &count, `SELECT count(*) FROM invite_settings WHERE account_id = $1`, acc.ID))
	assert.Equal(t, n*(n+1), count) // n event types × (n channels + Default)
}

func TestEventTypeListUpdateAndTenancy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, acc, _ := newStore(t)
	other, _, err := s.CreateAccount(ctx, "other")
	require.NoError(t, err)

	clock := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { clock = clock.Add(time.Millisecond); return clock })
	var ids []string
	for i := range 5 {
		et, err := s.CreateEventType(ctx, acc.ID, fmt.Sprint("t", i), i%2 == 0)
		require.NoError(t, err)
		ids = append([]string{et.ID}, ids...) // newest first
	}
	theirs, err := s.CreateEventType(ctx, other.ID, "t0", true)
	require.NoError(t, err)

	var seen []string
	p := pg.Page{Limit: 2}
	for {
		page, next, err := s.ListEventTypes(ctx, acc.ID, accountdb.EventTypeFilter{}, p)
		require.NoError(t, err)
		for _, et := range page {
			seen = append(seen, et.ID)
		}
		if next == nil {
			break
		}
		c, err := pg.DecodeCursor(next.Encode())
		require.NoError(t, err)
		p.After = &c
	}
	assert.Equal(t, ids, seen)

	active := true
	list, _, err := s.ListEventTypes(ctx, acc.ID, accountdb.EventTypeFilter{Active: &active}, pg.Page{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, list, 3)
	name := "t3"
	list, _, err = s.ListEventTypes(ctx, acc.ID, accountdb.EventTypeFilter{Name: &name, Active: &active}, pg.Page{Limit: 10})
	require.NoError(t, err)
	assert.Empty(t, list)

	_, err = s.EventType(ctx, acc.ID, theirs.ID)
	assert.ErrorIs(t, err, pg.ErrNotFound)
	_, err = s.UpdateEventType(ctx, acc.ID, theirs.ID, accountdb.EventTypeUpdate{Active: &active})
	assert.ErrorIs(t, err, pg.ErrNotFound)

	renamed, inactive := "renamed", false
	et, err := s.UpdateEventType(ctx, acc.ID, ids[0], accountdb.EventTypeUpdate{Name: &renamed, Active: &inactive})
	require.NoError(t, err)
	assert.Equal(t, "renamed", et.Name)
	assert.False(t, et.Active)
	assert.True(t, et.UpdatedAt.After(et.CreatedAt))
	taken := "t0"
	_, err = s.UpdateEventType(ctx, acc.ID, ids[0], accountdb.EventTypeUpdate{Name: &taken})
	assert.ErrorIs(t, err, pg.ErrConflict)
	byName, err := s.EventTypeByName(ctx, acc.ID, "renamed")
	require.NoError(t, err)
	assert.Equal(t, et, byName)
}

func TestUpdateInviteSetting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, acc, _ := newStore(t)
	other, _, err := s.CreateAccount(ctx, "other")
	require.NoError(t, err)
	_, err = s.CreateEventType(ctx, acc.ID, "checkout", true)
	require.NoError(t, err)
	list, _, err := s.ListInviteSettings(ctx, acc.ID, accountdb.InviteSettingFilter{}, pg.Page{Limit: 1})
	require.NoError(t, err)
	is := list[0]

	window := &sendtime.SendWindow{Start: "09:00", End: "20:00", TimeZone: "Europe/Berlin"}
	got, err := s.UpdateInviteSetting(ctx, acc.ID, is.ID, func(is *accountdb.InviteSetting) error {
		is.Medium, is.Delay, is.DelayFrom, is.SendWindow, is.MinDaysBetweenInvites, is.Active = "sms", "PT1H", "delivery", window, 0, false
		is.ID = "ist-hijack" // ignored
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, is.ID, got.ID)
	reread, err := s.InviteSetting(ctx, acc.ID, is.ID)
	require.NoError(t, err)
	assert.Equal(t, got, reread)
	assert.Equal(t, window, reread.SendWindow)
	assert.Equal(t, invite.SMS, reread.Medium)
	assert.True(t, reread.UpdatedAt.After(is.UpdatedAt) || reread.UpdatedAt.Equal(is.UpdatedAt))

	// Clearing the window writes NULL; an unchanged row is not written.
	got, err = s.UpdateInviteSetting(ctx, acc.ID, is.ID, func(is *accountdb.InviteSetting) error { is.SendWindow = nil; return nil })
	require.NoError(t, err)
	assert.Nil(t, got.SendWindow)
	again, err := s.UpdateInviteSetting(ctx, acc.ID, is.ID, func(*accountdb.InviteSetting) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, got, again)

	boom := fmt.Errorf("invalid")
	_, err = s.UpdateInviteSetting(ctx, acc.ID, is.ID, func(*accountdb.InviteSetting) error { return boom })
	assert.ErrorIs(t, err, boom)

	_, err = s.InviteSetting(ctx, other.ID, is.ID)
	assert.ErrorIs(t, err, pg.ErrNotFound)
	_, err = s.UpdateInviteSetting(ctx, other.ID, is.ID, func(*accountdb.InviteSetting) error { return nil })
	assert.ErrorIs(t, err, pg.ErrNotFound)
	theirs, _, err := s.ListInviteSettings(ctx, other.ID, accountdb.InviteSettingFilter{}, pg.Page{})
	require.NoError(t, err)
	assert.Empty(t, theirs)
}
