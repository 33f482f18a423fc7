package stats_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/stats"
)

var accepted = time.Date(2026, 3, 10, 12, 7, 30, 0, time.UTC)

func facts(status invite.Status, reason invite.Reason) stats.Facts {
	return stats.Facts{AccountID: "acc-1", ReceivedAt: accepted, EventTypeID: "ety-1", ChannelID: "chl-1", Locale: "de",
		Invite: invite.State{Status: status, Reason: reason, Medium: invite.Email}}
}

func TestStatusColumn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status invite.Status
		reason invite.Reason
		want   stats.Column
	}{
		{invite.Pending, "", stats.Pending},
		{invite.Scheduled, "", stats.Scheduled},
		{invite.Sending, "", stats.Scheduled},
		{invite.Sent, "", stats.Sent},
		{invite.Failed, invite.DeliveryUncertain, stats.Failed},
		{invite.Cancelled, "", stats.Cancelled},
		{invite.Skipped, invite.EventTypeInactive, stats.SkippedEventTypeInactive},
		{invite.Skipped, invite.SettingInactive, stats.SkippedSettingInactive},
		{invite.Skipped, invite.RecentlyInvited, stats.SkippedRecentlyInvited},
		{invite.Skipped, invite.Suppressed, stats.SkippedSuppressed},
		{invite.Skipped, invite.NoAddress, stats.SkippedNoAddress},
		{invite.Skipped, invite.QuotaExceeded, stats.SkippedQuotaExceeded},
		{invite.Skipped, "something_new", stats.SkippedOther},
		{"unheard_of", "", stats.Pending},
	} {
		assert.Equal(t, tc.want, stats.StatusColumn(tc.status, tc.reason), "%s %s", tc.status, tc.reason)
	}
}

func TestFactsCountOnce(t *testing.T) {
	t.Parallel()
	f := facts(invite.Sent, "")
	f.Opened, f.Reviewed, f.Rating, f.Unsubscribed, f.Delivery = true, true, 4, true, "delivered"
	c := f.Counts()
	for col, n := range c {
		want := int64(0)
		switch stats.Column(col) {
		case stats.Accepted, stats.Sent, stats.Opened, stats.Reviewed, stats.Rated4, stats.Unsubscribed, stats.Delivered:
			want = 1
		}
		assert.Equal(t, want, n, stats.Columns()[col])
	}
	f.Rating = 0 // a review with product ratings only
	assert.Zero(t, f.Counts().Ratings().Count)
	assert.EqualValues(t, 1, f.Counts()[stats.Reviewed])
	assert.Equal(t, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC), f.Key().Slot, "the quarter hour it was accepted in")
	assert.Equal(t, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), f.Key().Day())
}

func TestDelta(t *testing.T) {
	t.Parallel()
	after := facts(invite.Pending, "")
	d := stats.Delta(nil, after)
	require.Len(t, d, 1)
	assert.EqualValues(t, 1, d[0].Counts[stats.Accepted])
	assert.EqualValues(t, 1, d[0].Counts[stats.Pending])

	// A move of state: one key, one column down, one up.
	before, sent := facts(invite.Sending, ""), facts(invite.Sent, "")
	d = stats.Delta(&before, sent)
	require.Len(t, d, 1)
	var want stats.Counts
	want[stats.Scheduled], want[stats.Sent] = -1, 1
	assert.Equal(t, want, d[0].Counts)

	// Nothing counted changes (a repeated step): nothing to write.
	assert.Empty(t, stats.Delta(&sent, sent))

	// The medium changes at the claim: the whole event moves key.
	sms := facts(invite.Sending, "")
	sms.Invite.Medium = invite.SMS
	sched := facts(invite.Scheduled, "")
	sched.Opened = true
	sms.Opened = true
	d = stats.Delta(&sched, sms)
	require.Len(t, d, 2)
	assert.Equal(t, invite.Email, d[0].Key.Medium, "sorted by key")
	assert.EqualValues(t, -1, d[0].Counts[stats.Accepted])
	assert.EqualValues(t, -1, d[0].Counts[stats.Opened])
	assert.EqualValues(t, 1, d[1].Counts[stats.Accepted])
	assert.EqualValues(t, 1, d[1].Counts[stats.Scheduled])
	assert.Equal(t, stats.Counts{}, d[0].Counts.Add(d[1].Counts).Sub(stats.Counts{}).Add(stats.Counts{}), "sums to nothing")
}

func TestLanguage(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"de_AT": "de", "DE-at": "de", " fr ": "fr", "": "en", "pt_BR": "en", "nl": "nl",
		"es_419": "es", "da_DK": "da", "xx": "en", "_de": "en"} {
		assert.Equal(t, want, stats.Language(in), in)
	}
	assert.Equal(t, []string{"da", "de", "en", "es", "fr", "nl"}, stats.Languages())
}

func TestParsePeriod(t *testing.T) {
	t.Parallel()
	p, errs := stats.ParsePeriod("2026-03-01", "2026-03-31", "Europe/Berlin")
	require.Empty(t, errs)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	assert.True(t, p.Start().Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, berlin)))
	assert.True(t, p.End().Equal(time.Date(2026, 4, 1, 0, 0, 0, 0, berlin)), "to is included")
	assert.Len(t, p.Days(), 31)
	assert.Equal(t, "Europe/Berlin", p.TimeZone())

	p, errs = stats.ParsePeriod("2025-01-01", "2026-02-04", "")
	require.Empty(t, errs, "400 days, both included")
	assert.Equal(t, "UTC", p.TimeZone())
	assert.Len(t, p.Days(), 400)

	for _, tc := range []struct{ from, to, tz, param string }{
		{"", "2026-03-01", "", "from"},
		{"2026-03-01", "", "", "to"},
		{"2026-3-1", "2026-03-01", "", "from"},
		{"2026-02-30", "2026-03-01", "", "from"},
		{"2026-03-01T00:00:00Z", "2026-03-02", "", "from"},
		{"2026-03-02", "2026-03-01", "", "to"},
		{"2025-01-01", "2026-02-05", "", "to"},
		{"1999-12-31", "2000-01-02", "", "from"},
		{"+02026-03-01", "2026-03-02", "", "from"},
		{"2026-03-01", "2026-03-02", "Local", "timeZone"},
		{"2026-03-01", "2026-03-02", "../../etc/passwd", "timeZone"},
		{"2026-03-01", "2026-03-02", "/usr/share/zoneinfo/UTC", "timeZone"},
		{"2026-03-01", "2026-03-02", "Mars/Olympus_Mons", "timeZone"},
		{"2026-03-01", "2026-03-02", "Europe/Berlin\x00", "timeZone"},
		{"2026-03-01", "2026-03-02", "EST5EDT,M3.2.0,M11.1.0", "timeZone"},
		{"2026-03-01", "2026-03-02", strings.Repeat("A", 65), "timeZone"},
		{"2026-03-01", "2026-03-02", "<script>", "timeZone"},
	} {
		_, errs := stats.ParsePeriod(tc.from, tc.to, tc.tz)
		require.NotEmpty(t, errs, "%+v", tc)
		assert.Equal(t, tc.param, errs[0].Param, "%+v", tc)
		assert.NotEmpty(t, errs[0].Message)
	}
	_, errs = stats.ParsePeriod("", "", "Nowhere/Else")
	assert.Len(t, errs, 3, "every problem at once")
}

func TestCompleteFillsEveryDay(t *testing.T) {
	t.Parallel()
	p, errs := stats.ParsePeriod("2026-03-01", "2026-03-03", "")
	require.Empty(t, errs)
	var c stats.Counts
	c[stats.Accepted] = 2
	got := stats.Complete(p, stats.GroupDay, []stats.Group{{Key: "2026-03-02", Counts: c}})
	assert.Equal(t, []stats.Group{{Key: "2026-03-01"}, {Key: "2026-03-02", Counts: c}, {Key: "2026-03-03"}}, got)
	got = stats.Complete(p, stats.GroupChannel, []stats.Group{{Key: "chl-b"}, {Key: "chl-a"}})
	assert.Equal(t, []stats.Group{{Key: "chl-a"}, {Key: "chl-b"}}, got, "other groupings: only keys with counts, sorted")
	assert.Equal(t, c, stats.Total([]stats.Group{{Counts: c}, {}}))
}

func TestRates(t *testing.T) {
	t.Parallel()
	var c stats.Counts
	_, ok := c.ReviewRate()
	assert.False(t, ok, "nothing sent: no rate")
	c[stats.Sent], c[stats.Reviewed] = 3, 1
	r, ok := c.ReviewRate()
	assert.True(t, ok)
	assert.InDelta(t, 0.3333, r, 1e-9)
	c[stats.Rated4], c[stats.Rated5] = 1, 1
	assert.Equal(t, "4.5", c.Ratings().AverageText())
	assert.Equal(t, map[string]int64{"1": 0, "2": 0, "3": 0, "4": 1, "5": 1}, c.Ratings().DistributionMap())
}

func TestBar(t *testing.T) {
	t.Parallel()
	assert.Equal(t, strings.Repeat("█", 40), stats.Bar(10, 10, 40))
	assert.Equal(t, strings.Repeat("█", 20), stats.Bar(5, 10, 40))
	assert.Equal(t, "▏", stats.Bar(1, 1000000, 40), "a count above zero always shows")
	assert.Equal(t, "", stats.Bar(0, 10, 40))
	assert.Equal(t, "", stats.Bar(3, 0, 40))
	assert.Equal(t, "█████▌", stats.Bar(11, 80, 40), "to an eighth of a cell")
}

func TestWriteFunnel(t *testing.T) {
	t.Parallel()
	p, errs := stats.ParsePeriod("2026-03-01", "2026-03-31", "Europe/Berlin")
	require.Empty(t, errs)
	var c stats.Counts
	c[stats.Accepted], c[stats.Sent], c[stats.Opened], c[stats.Reviewed], c[stats.Rated5] = 200, 100, 50, 25, 25
	c[stats.SkippedSuppressed], c[stats.SkippedRecentlyInvited] = 60, 40
	var buf bytes.Buffer
	require.NoError(t, stats.WriteFunnel(&buf, "acc-1", p, c))
	out := buf.String()
	assert.Contains(t, out, "acc-1, events accepted 2026-03-01 to 2026-03-31 (Europe/Berlin)")
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = l
		}
	}
	assert.Contains(t, lines["accepted"], "100.0%")
	assert.Contains(t, lines["accepted"], strings.Repeat("█", 40))
	assert.Contains(t, lines["sent"], "50.0%")
	assert.Contains(t, lines["sent"], strings.Repeat("█", 20))
	assert.NotContains(t, lines["sent"], strings.Repeat("█", 21))
	assert.Contains(t, lines["reviewed"], "12.5%")
	assert.Contains(t, lines["skipped"], "100")
	assert.Contains(t, out, "25.0% of those sent")
	assert.Contains(t, out, "5.0 from 25 ratings")
	assert.Contains(t, out, "recently_invited 40, suppressed 60")
	// The bars start in one column.
	col := strings.Index(lines["accepted"], "█")
	assert.Equal(t, col, strings.Index(lines["sent"], "█"))

	buf.Reset()
	require.NoError(t, stats.WriteFunnel(&buf, "acc-1", p, stats.Counts{}))
	assert.Contains(t, buf.String(), "accepted")
	assert.NotContains(t, buf.String(), "█", "no events, no bars")
}
