package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/reportdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/store/statsdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// funnelTenant is an account whose events are accepted through the
// store, as the API accepts them.
type funnelTenant struct {
	eventfixture.Tenant
	typeID string
}

func newFunnelTenant(t *testing.T, st *store.Store) funnelTenant {
	t.Helper()
	tn := eventfixture.NewTenant(t, st)
	types, _, err := st.Accounts.ListEventTypes(context.Background(), tn.AccountID, accountdb.EventTypeFilter{}, store.Page{Limit: 10})
	require.NoError(t, err)
	require.Len(t, types, 1)
	return funnelTenant{Tenant: tn, typeID: types[0].ID}
}

func (f funnelTenant) accept(t *testing.T, email, locale string) string {
	t.Helper()
	e := f.Event(email)
	e.Payload = json.RawMessage(fmt.Sprintf(`{"customer":{"email":%q},"defaultLocale":%q}`, email, locale))
	acc, err := f.St.Events.AcceptEvent(context.Background(), e)
	require.NoError(t, err)
	return acc.EventID
}

// wholeDay asks for the counts of the UTC day of at.
func wholeDay(accountID string, at time.Time, by stats.GroupBy) statsdb.Query {
	day := at.UTC().Truncate(24 * time.Hour)
	return statsdb.Query{AccountID: accountID, From: day, To: day.Add(24 * time.Hour), GroupBy: by}
}

func total(t *testing.T, st *store.Store, q statsdb.Query) stats.Counts {
	t.Helper()
	groups, err := st.Stats.InviteStats(context.Background(), q)
	require.NoError(t, err)
	return stats.Total(groups)
}

// rowCounts counts the account's events straight from their rows, by a
// rule written out here rather than the package's: what the counts kept
// change by change must equal.
func rowCounts(t *testing.T, st *store.Store, accountID string) stats.Counts {
	t.Helper()
	var rows []struct {
		Status       string `db:"invite_status"`
		Reason       string `db:"reason"`
		Opened       bool   `db:"opened"`
		Unsubscribed bool   `db:"unsubscribed"`
		Reviewed     bool   `db:"reviewed"`
		Rating       int    `db:"rating"`
		Delivery     string `db:"delivery"`
	}
	require.NoError(t, st.DB().Select(&rows, `
		SELECT e.invite_status, COALESCE(e.invite_reason, '') AS reason, e.opened_at IS NOT NULL AS opened,
		       e.unsubscribed_at IS NOT NULL AS unsubscribed, r.id IS NOT NULL AS reviewed, COALESCE(r.rating, 0) AS rating,
		       COALESCE(d.status, '') AS delivery
		FROM events e LEFT JOIN reviews r ON r.event_id = e.id
		LEFT JOIN mail_deliveries d ON d.event_id = e.id AND d.message = 'invite'
		WHERE e.account_id = $1`, accountID))
	var c stats.Counts
	skipped := map[string]stats.Column{"event_type_inactive": stats.SkippedEventTypeInactive, "setting_inactive": stats.SkippedSettingInactive,
		"recently_invited": stats.SkippedRecentlyInvited, "suppressed": stats.SkippedSuppressed, "no_address": stats.SkippedNoAddress,
		"quota_exceeded": stats.SkippedQuotaExceeded}
	for _, r := range rows {
		c[stats.Accepted]++
		switch r.Status {
		case "pending":
			c[stats.Pending]++
		case "scheduled", "sending":
			c[stats.Scheduled]++
		case "sent":
			c[stats.Sent]++
		case "failed":
			c[stats.Failed]++
		case "cancelled":
			c[stats.Cancelled]++
		case "skipped":
			col, ok := skipped[r.Reason]
			if !ok {
				col = stats.SkippedOther
			}
			c[col]++
		default:
			t.Fatalf("status %q", r.Status)
		}
		if r.Opened {
			c[stats.Opened]++
		}
		if r.Unsubscribed {
			c[stats.Unsubscribed]++
		}
		switch r.Delivery {
		case "delivered", "complained":
			c[stats.Delivered]++
		case "bounced":
			c[stats.Bounced]++
		}
		if r.Reviewed {
			c[stats.Reviewed]++
			if r.Rating > 0 {
				c[stats.Rated1+stats.Column(r.Rating-1)]++
			}
		}
	}
	return c
}

// send takes a scheduled invite through a claim to sent.
func send(t *testing.T, st *store.Store, id string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	_, err := st.Invites.MarkScheduled(ctx, invite.KindInvite, id, at)
	require.NoError(t, err)
	c, err := st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send, "%s: %+v", id, c.State)
	s, err := st.Invites.FinishSend(ctx, invite.KindInvite, id, invite.SendResult{SentAt: at})
	require.NoError(t, err)
	require.Equal(t, invite.Sent, s.Status)
}

// TestFunnelCountsEveryTransitionOnce drives every move an invite makes —
// sent, skipped for each reason a claim finds, failed and retried until
// sent, cancelled, reviewed (twice, and racing), opened (many times, in
// parallel), unsubscribed — with steps repeated concurrently as Temporal
// may repeat them, while the compactor folds the changes all along, and
// holds the counts kept change by change to a count over the rows, before
// and after the last fold, and to a rebuild from the rows as the
// migration makes it.
func TestFunnelCountsEveryTransitionOnce(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	db.SetMaxOpenConns(6) // the server is shared: races need a few connections, not one per goroutine
	st := storeset.New(db, "PT10S")
	f := newFunnelTenant(t, st)
	other := newFunnelTenant(t, st) // another eventfixture.Tenant's counts must stay apart
	ctx := context.Background()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	st.SetClock(func() time.Time { return now })
	stopFolding := foldAllAlong(t, st)

	var (
		sentIDs     []string
		reviewIDs   []string
		failedRetry = f.accept(t, "retry@example.com", "fr_FR")
		cancelled   = f.accept(t, "cancel@example.com", "")
		pending     = f.accept(t, "pending@example.com", "de")
		inactive    = f.accept(t, "inactive@example.com", "")
		suppressed  = f.accept(t, "blocked@example.com", "")
		failedOnly  = f.accept(t, "fail@example.com", "")
	)
	for i := range 6 {
		id := f.accept(t, fmt.Sprintf("c%d@example.com", i), []string{"de_AT", "da", "nl-NL", "xx", "ES", ""}[i])
		sentIDs = append(sentIDs, id)
	}
	batch, err := st.Events.AcceptEvents(ctx, []eventdb.NewEvent{f.Event("b1@example.com"), f.Event("b2@example.com")})
	require.NoError(t, err)
	for _, o := range batch {
		require.NoError(t, o.Err)
		sentIDs = append(sentIDs, o.EventID)
	}
	other.accept(t, "other@example.com", "")
	_, _, err = st.Suppressions.AddSuppression(ctx, f.AccountID, "blocked@example.com", invite.Email, invite.Manual, "")
	require.NoError(t, err)

	// Each invite's steps run beside the others', every step twice at
	// once (a repeated activity).
	// A repeated step may find its work done (a refusal), never an error.
	ok := func(_ any, err error) {
		if err != nil && !errors.Is(err, invite.ErrRefused) && !errors.Is(err, invitedb.ErrInviteState) {
			assert.NoError(t, err)
		}
	}
	twice := func(fn func()) {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(fn)
		}
		wg.Wait()
	}
	var wg sync.WaitGroup
	for _, id := range sentIDs {
		wg.Go(func() {
			twice(func() { ok(st.Invites.MarkScheduled(ctx, invite.KindInvite, id, now)) })
			twice(func() { ok(st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{})) })
			twice(func() { ok(st.Invites.FinishSend(ctx, invite.KindInvite, id, invite.SendResult{SentAt: now})) })
		})
	}
	wg.Go(func() {
		twice(func() { ok(st.Invites.MarkSkipped(ctx, invite.KindInvite, inactive, invite.SettingInactive)) })
	})
	wg.Go(func() {
		ok(st.Invites.MarkScheduled(ctx, invite.KindInvite, suppressed, now))
		twice(func() { ok(st.Invites.ClaimSend(ctx, invite.KindInvite, suppressed, invitedb.ClaimOptions{})) })
	})
	wg.Go(func() {
		ok(st.Invites.MarkScheduled(ctx, invite.KindInvite, cancelled, now))
		twice(func() { ok(st.Invites.CancelInvite(ctx, f.AccountID, cancelled)) })
	})
	wg.Go(func() {
		ok(st.Invites.MarkScheduled(ctx, invite.KindInvite, failedOnly, now))
		ok(st.Invites.ClaimSend(ctx, invite.KindInvite, failedOnly, invitedb.ClaimOptions{}))
		twice(func() {
			ok(st.Invites.FinishSend(ctx, invite.KindInvite, failedOnly, invite.SendResult{Reason: invite.Rejected, Error: "550"}))
		})
	})
	wg.Go(func() {
		// Failed after a transient failure and its give-up, retried, sent.
		ok(st.Invites.MarkScheduled(ctx, invite.KindInvite, failedRetry, now))
		ok(st.Invites.ClaimSend(ctx, invite.KindInvite, failedRetry, invitedb.ClaimOptions{}))
		ok(st.Invites.FinishSend(ctx, invite.KindInvite, failedRetry, invite.SendResult{Retry: true, Error: "421"}))
		twice(func() { ok(st.Invites.GiveUp(ctx, invite.KindInvite, failedRetry, invite.RetriesExhausted, "421")) })
		twice(func() { ok(st.Invites.RetryInvite(ctx, f.AccountID, failedRetry)) })
	})
	wg.Wait()
	send(t, st, failedRetry, now)

	// Reviews: racing first posts, then a changed rating; openings in
	// parallel; an unsubscribe, repeated.
	reviewIDs = sentIDs[:3]
	for i, id := range reviewIDs {
		var rw sync.WaitGroup
		for range 4 {
			rw.Go(func() {
				ok(st.Invites.MarkOpened(ctx, id))
				_, _, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: id, Rating: 2, Locale: "en"})
				assert.NoError(t, err)
			})
		}
		rw.Wait()
		_, _, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: id, Rating: 3 + i, Comment: "changed", Locale: "en"})
		require.NoError(t, err)
	}
	var ow sync.WaitGroup
	for range 8 {
		ow.Go(func() { ok(st.Invites.MarkOpened(ctx, sentIDs[3])) })
	}
	ow.Wait()
	first, err := st.Invites.MarkOpened(ctx, sentIDs[3])
	require.NoError(t, err)
	assert.False(t, first, "a later opening is not recorded again")
	for range 2 {
		_, _, err = st.Suppressions.AddSuppression(ctx, f.AccountID, "c4@example.com", invite.Email, invite.Unsubscribed, sentIDs[4])
		require.NoError(t, err)
	}

	// The provider's reports: delivered, then bounced for one message
	// (a bounce outranks), racing repeats, a reminder's report (not the
	// invite's).
	report := func(id, pid string, o invite.MailOutcome, k invite.Kind) reportdb.MailReport {
		return reportdb.MailReport{Provider: "ses", ID: pid, Outcome: o, EventID: id, Kind: k, At: now}
	}
	var mw sync.WaitGroup
	for _, r := range []reportdb.MailReport{
		report(sentIDs[5], "d5", invite.MailDelivered, invite.KindInvite), report(sentIDs[5], "d5", invite.MailDelivered, invite.KindInvite),
		report(sentIDs[6], "d6", invite.MailDelivered, invite.KindInvite), report(sentIDs[6], "b6", invite.MailBounced, invite.KindInvite),
		report(sentIDs[7], "c7", invite.MailComplained, invite.KindInvite), report(sentIDs[7], "d7", invite.MailDelivered, invite.KindInvite),
		report(sentIDs[0], "r0", invite.MailDelivered, invite.KindReminder),
	} {
		mw.Go(func() {
			_, err := st.Reports.ApplyMailReports(ctx, nil, []reportdb.MailReport{r})
			assert.NoError(t, err)
		})
	}
	mw.Wait()
	folds := stopFolding()

	got := total(t, st, wholeDay(f.AccountID, now, stats.GroupDay))
	want := rowCounts(t, st, f.AccountID)
	assert.Equal(t, want, got, "the counts kept change by change are the rows' counts")
	assert.Positive(t, folds, "the changes were folded during the run")
	_, err = st.Stats.FoldFunnel(ctx)
	require.NoError(t, err)
	assert.Equal(t, got, total(t, st, wholeDay(f.AccountID, now, stats.GroupDay)), "folded, the counts stay")
	var left int
	require.NoError(t, db.Get(&left, `SELECT count(*) FROM invite_rollup_changes`))
	assert.Zero(t, left, "every change folded")
	// One more after the fold: what follows reads folded counts and a
	// change not folded yet together.
	f.accept(t, "late@example.com", "")
	got = total(t, st, wholeDay(f.AccountID, now, stats.GroupDay))
	assert.Equal(t, rowCounts(t, st, f.AccountID), got)

	var expect stats.Counts
	expect[stats.Accepted] = 15
	expect[stats.Pending] = 2 // one left pending, the late one
	expect[stats.Sent] = 9    // eight, and the retried one once
	expect[stats.Failed] = 1
	expect[stats.Cancelled] = 1
	expect[stats.SkippedSettingInactive] = 1
	expect[stats.SkippedSuppressed] = 1
	expect[stats.Opened] = 4 // three reviewed, one only opened
	expect[stats.Reviewed] = 3
	expect[stats.Rated3], expect[stats.Rated4], expect[stats.Rated5] = 1, 1, 1
	expect[stats.Unsubscribed] = 1
	expect[stats.Delivered] = 2 // one delivered, one complained of
	expect[stats.Bounced] = 1
	assert.Equal(t, expect, got)
	e, err := st.Invites.Event(ctx, f.AccountID, pending)
	require.NoError(t, err)
	assert.Equal(t, invite.Pending, e.InviteStatus)

	// Grouped any way, the groups add up to the same.
	for _, by := range stats.Groupings() {
		assert.Equal(t, got, total(t, st, wholeDay(f.AccountID, now, by)), by)
	}
	groups, err := st.Stats.InviteStats(ctx, wholeDay(f.AccountID, now, stats.GroupLocale))
	require.NoError(t, err)
	byLocale := map[string]int64{}
	for _, g := range groups {
		byLocale[g.Key] = g.Counts[stats.Accepted]
	}
	assert.Equal(t, map[string]int64{"da": 1, "de": 2, "en": 9, "es": 1, "fr": 1, "nl": 1}, byLocale)

	// The other eventfixture.Tenant sees only its own event.
	o := total(t, st, wholeDay(other.AccountID, now, stats.GroupDay))
	assert.EqualValues(t, 1, o[stats.Accepted])
	assert.EqualValues(t, 1, o[stats.Pending])

	// The migration's rebuild from the rows gives the same counts.
	before := map[stats.GroupBy][]stats.Group{}
	for _, by := range stats.Groupings() {
		before[by], err = st.Stats.InviteStats(ctx, wholeDay(f.AccountID, now, by))
		require.NoError(t, err)
	}
	_, err = st.DB().Exec(`SELECT touchpoint_rebuild_rollups()`)
	require.NoError(t, err)
	for _, by := range stats.Groupings() {
		after, err := st.Stats.InviteStats(ctx, wholeDay(f.AccountID, now, by))
		require.NoError(t, err)
		assert.Equal(t, before[by], after, by)
	}
}

// foldAllAlong folds the funnel's changes again and again until the
// returned func is called, which returns how many rows were folded.
func foldAllAlong(t *testing.T, st *store.Store) (stop func() int) {
	done, folded := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				folded <- n
				return
			case <-time.After(5 * time.Millisecond):
			}
			k, err := st.Stats.FoldFunnel(context.Background())
			assert.NoError(t, err)
			n += k
		}
	}()
	return func() int { close(done); return <-folded }
}

// TestStatsDaysOfATimeZone counts events by the day they were accepted
// in the asked time zone: an event at 23:30 UTC belongs to the next day
// in Berlin, and a period's ends that are not UTC midnight are read from
// the quarter hours.
func TestStatsDaysOfATimeZone(t *testing.T) {
	t.Parallel()
	st := storeset.New(testdb.New(t), "PT10S")
	f := newFunnelTenant(t, st)
	ctx := context.Background()
	at := func(s string) {
		ts, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		st.SetClock(func() time.Time { return ts })
		f.accept(t, "x@example.com", "")
	}
	at("2026-03-09T22:59:00Z") // Berlin 23:59 on the 9th
	at("2026-03-09T23:30:00Z") // Berlin 00:30 on the 10th
	at("2026-03-10T12:00:00Z") // the 10th either way
	at("2026-03-10T23:14:59Z") // Berlin 00:14 on the 11th

	days := func(tz string, by stats.GroupBy) map[string]int64 {
		p, errs := stats.ParsePeriod("2026-03-09", "2026-03-10", tz)
		require.Empty(t, errs)
		groups, err := st.Stats.InviteStats(ctx, statsdb.Query{AccountID: f.AccountID, From: p.Start(), To: p.End(),
			TimeZone: p.TimeZone(), GroupBy: by})
		require.NoError(t, err)
		out := map[string]int64{}
		for _, g := range groups {
			out[g.Key] = g.Counts[stats.Accepted]
		}
		return out
	}
	assert.Equal(t, map[string]int64{"2026-03-09": 2, "2026-03-10": 2}, days("", stats.GroupDay))
	assert.Equal(t, map[string]int64{"2026-03-09": 1, "2026-03-10": 2}, days("Europe/Berlin", stats.GroupDay))
	assert.Equal(t, map[string]int64{f.typeID: 3}, days("Europe/Berlin", stats.GroupEventType))
	assert.Equal(t, map[string]int64{f.typeID: 4}, days("UTC", stats.GroupEventType))
	// Kolkata is UTC+05:30: its days begin on a half hour; the last
	// event is on its 11th.
	assert.Equal(t, map[string]int64{"2026-03-10": 3}, days("Asia/Kolkata", stats.GroupDay))
	assert.Equal(t, map[string]int64{"en": 3}, days("Asia/Kolkata", stats.GroupLocale))
	assert.Equal(t, map[string]int64{"email": 4}, days("America/New_York", stats.GroupMedium))

	_, err := st.Stats.InviteStats(ctx, statsdb.Query{AccountID: f.AccountID, From: time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC),
		To: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), TimeZone: "Mars/Olympus_Mons", GroupBy: stats.GroupDay})
	assert.ErrorIs(t, err, statsdb.ErrUnknownTimeZone)
}

// TestLanguageIsOneRule holds the SQL function that counts an event's
// language at acceptance to stats.Language.
func TestLanguageIsOneRule(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	for _, in := range []string{"", "de", "de_AT", "DE-at", " fr_BE ", "nl_NL", "da", "es_419", "pt_BR", "xx", "_AT",
		"en_US", "EN", "de__x", "dé", "-de", "\u00e9s", "sv"} {
		var got string
		require.NoError(t, db.Get(&got, `SELECT touchpoint_language($1)`, in))
		assert.Equal(t, stats.Language(in), got, "%q", in)
	}
	var null string
	require.NoError(t, db.Get(&null, `SELECT touchpoint_language(NULL)`))
	assert.Equal(t, "en", null)
}

// TestRollupColumnsAreTheCounts holds both tables' count columns to
// stats.Columns, which every statement is written from.
func TestRollupColumnsAreTheCounts(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	for table, keys := range map[string][]string{
		"invite_rollups":        {"account_id", "day", "event_type_id", "channel_id", "locale", "medium"},
		"invite_rollup_slots":   {"account_id", "event_type_id", "channel_id", "locale", "medium", "slot"},
		"invite_rollup_changes": {"account_id", "event_type_id", "channel_id", "locale", "medium", "slot"},
	} {
		var cols []string
		require.NoError(t, db.Select(&cols, `SELECT column_name FROM information_schema.columns
			WHERE table_name = $1 AND data_type = 'bigint' ORDER BY column_name`, table))
		assert.ElementsMatch(t, stats.Columns(), cols, table)
		var all int
		require.NoError(t, db.Get(&all, `SELECT count(*) FROM information_schema.columns WHERE table_name = $1`, table))
		assert.Equal(t, len(stats.Columns())+len(keys), all, table)
	}
}
