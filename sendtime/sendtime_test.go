package sendtime_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/sendtime"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestSendTime(t *testing.T) {
	t.Parallel()
	berlin := &sendtime.SendWindow{Start: "09:00", End: "17:00", TimeZone: "Europe/Berlin"}
	tests := []struct {
		name string
		now  string
		plan sendtime.Plan
		want string
	}{
		{
			name: "event + delay",
			now:  "2026-05-01T10:00:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T10:00:00Z"), Delay: "P7D", DelayFrom: "event"},
			want: "2026-05-08T10:00:00Z",
		},
		{
			name: "transaction + delay",
			now:  "2026-05-01T10:00:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T10:00:00Z"), TransactionDate: utc("2026-04-29T08:30:00Z"), Delay: "P3D", DelayFrom: "transaction"},
			want: "2026-05-02T08:30:00Z",
		},
		{
			name: "transaction in the past: send now",
			now:  "2026-05-01T10:00:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T10:00:00Z"), TransactionDate: utc("2026-04-01T08:00:00Z"), Delay: "P7D", DelayFrom: "transaction"},
			want: "2026-05-01T10:00:00Z",
		},
		{
			name: "delivery date: midnight UTC without a window",
			now:  "2026-05-01T10:00:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T10:00:00Z"), DeliveryDate: "2026-05-04", Delay: "P2D", DelayFrom: "delivery"},
			want: "2026-05-06T00:00:00Z",
		},
		{
			name: "delivery date: midnight in the window's zone, then into the window",
			now:  "2026-05-01T10:00:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T10:00:00Z"), DeliveryDate: "2026-05-04", Delay: "PT10H", DelayFrom: "delivery", SendWindow: berlin},
			want: "2026-05-04T08:00:00Z", // 00:00 CEST + 10 h = 10:00 CEST, inside
		},
		{
			name: "delivery date absent: from the event",
			now:  "2026-05-01T10:00:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T10:00:00Z"), Delay: "P1D", DelayFrom: "delivery"},
			want: "2026-05-02T10:00:00Z",
		},
		{
			name: "past start: now",
			now:  "2026-05-01T10:00:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-01-01T10:00:00Z"), Delay: "P7D"},
			want: "2026-05-01T10:00:00Z",
		},
		{
			name: "past start, now outside the window: next opening",
			now:  "2026-05-01T18:00:00Z", // 20:00 CEST
			plan: sendtime.Plan{ReceivedAt: utc("2026-01-01T10:00:00Z"), Delay: "P7D", SendWindow: berlin},
			want: "2026-05-02T07:00:00Z",
		},
		{
			name: "window start is inclusive",
			now:  "2026-05-01T07:00:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T07:00:00Z"), Delay: "PT0S", SendWindow: berlin},
			want: "2026-05-01T07:00:00Z",
		},
		{
			name: "window end is exclusive",
			now:  "2026-05-01T15:00:00Z", // 17:00 CEST
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T15:00:00Z"), Delay: "PT0S", SendWindow: berlin},
			want: "2026-05-02T07:00:00Z",
		},
		{
			name: "before the window opens today",
			now:  "2026-05-01T03:00:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T03:00:00Z"), Delay: "PT1H", SendWindow: berlin},
			want: "2026-05-01T07:00:00Z",
		},
		{
			name: "spring forward (Berlin 2026-03-29): next opening at 09:00 CEST",
			now:  "2026-03-28T18:00:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-03-28T18:00:00Z"), Delay: "PT1H", SendWindow: berlin},
			want: "2026-03-29T07:00:00Z",
		},
		{
			name: "spring forward: window opening in the gap opens at the jump",
			now:  "2026-03-29T00:00:00Z", // 01:00 CET
			plan: sendtime.Plan{ReceivedAt: utc("2026-03-29T00:00:00Z"), Delay: "PT0S",
				SendWindow: &sendtime.SendWindow{Start: "02:30", End: "05:00", TimeZone: "Europe/Berlin"}},
			want: "2026-03-29T01:00:00Z", // 03:00 CEST
		},
		{
			name: "spring forward: a window wholly in the gap opens the next day",
			now:  "2026-03-29T00:30:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-03-29T00:30:00Z"), Delay: "PT0S",
				SendWindow: &sendtime.SendWindow{Start: "02:00", End: "02:45", TimeZone: "Europe/Berlin"}},
			want: "2026-03-30T00:00:00Z", // 02:00 CEST
		},
		{
			name: "fall back (Berlin 2026-10-25): next opening at 09:00 CET",
			now:  "2026-10-24T16:00:00Z", // 18:00 CEST
			plan: sendtime.Plan{ReceivedAt: utc("2026-10-24T16:00:00Z"), Delay: "PT0S", SendWindow: berlin},
			want: "2026-10-25T08:00:00Z",
		},
		{
			name: "fall back: a repeated opening time opens at its first occurrence",
			now:  "2026-10-24T22:00:00Z", // 00:00 CEST
			plan: sendtime.Plan{ReceivedAt: utc("2026-10-24T22:00:00Z"), Delay: "PT0S",
				SendWindow: &sendtime.SendWindow{Start: "02:30", End: "04:00", TimeZone: "Europe/Berlin"}},
			want: "2026-10-25T00:30:00Z", // 02:30 CEST
		},
		{
			name: "fall back: delay of a day counts 25 real hours only through the window",
			now:  "2026-10-24T10:00:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-10-24T10:00:00Z"), Delay: "P1D", SendWindow: berlin},
			want: "2026-10-25T10:00:00Z", // 11:00 CET, inside
		},
		{
			name: "overnight window: inside before midnight",
			now:  "2026-05-01T21:00:00Z", // 23:00 CEST
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T21:00:00Z"), Delay: "PT0S",
				SendWindow: &sendtime.SendWindow{Start: "22:00", End: "06:00", TimeZone: "Europe/Berlin"}},
			want: "2026-05-01T21:00:00Z",
		},
		{
			name: "overnight window: inside after midnight",
			now:  "2026-05-01T01:00:00Z", // 03:00 CEST
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T01:00:00Z"), Delay: "PT0S",
				SendWindow: &sendtime.SendWindow{Start: "22:00", End: "06:00", TimeZone: "Europe/Berlin"}},
			want: "2026-05-01T01:00:00Z",
		},
		{
			name: "overnight window: closed at its end, opens the same evening",
			now:  "2026-05-01T04:00:00Z", // 06:00 CEST
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T04:00:00Z"), Delay: "PT0S",
				SendWindow: &sendtime.SendWindow{Start: "22:00", End: "06:00", TimeZone: "Europe/Berlin"}},
			want: "2026-05-01T20:00:00Z",
		},
		{
			name: "overnight window across the New York spring forward",
			now:  "2026-03-08T12:00:00Z", // 08:00 EDT
			plan: sendtime.Plan{ReceivedAt: utc("2026-03-07T12:00:00Z"), Delay: "P1D",
				SendWindow: &sendtime.SendWindow{Start: "20:00", End: "01:30", TimeZone: "America/New_York"}},
			want: "2026-03-09T00:00:00Z", // 20:00 EDT
		},
		{
			name: "unparseable copy: no delay, no window, never fail",
			now:  "2026-05-01T10:00:00Z",
			plan: sendtime.Plan{ReceivedAt: utc("2026-05-01T10:00:00Z"), Delay: "soon",
				SendWindow: &sendtime.SendWindow{Start: "9", End: "17", TimeZone: "Mars/Olympus"}},
			want: "2026-05-01T10:00:00Z",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := sendtime.SendTime(utc(tc.now), tc.plan)
			assert.Equal(t, utc(tc.want), got, "got %s", got.Format(time.RFC3339))
			assert.Equal(t, time.UTC, got.Location())
		})
	}
}

func TestWindowContains(t *testing.T) {
	t.Parallel()
	w, err := sendtime.SendWindow{Start: "22:00", End: "06:00", TimeZone: "UTC"}.Parse()
	require.NoError(t, err)
	for at, want := range map[string]bool{
		"2026-05-01T21:59:59Z": false,
		"2026-05-01T22:00:00Z": true,
		"2026-05-01T23:59:59Z": true,
		"2026-05-02T00:00:00Z": true,
		"2026-05-02T05:59:59Z": true,
		"2026-05-02T06:00:00Z": false,
	} {
		assert.Equal(t, want, w.Contains(utc(at)), at)
	}
}

var fuzzZones = []string{"UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe",
	"Pacific/Apia", "Asia/Kolkata", "America/Santiago", "Pacific/Chatham", "Europe/London"}

func FuzzSendTime(f *testing.F) {
	f.Add(int64(1774738800), int64(-3600), uint32(3600), uint16(9*60), uint16(17*60), uint8(1), uint8(0))
	f.Add(int64(1792886400), int64(0), uint32(86400), uint16(150), uint16(240), uint8(1), uint8(2))
	f.Add(int64(1772928000), int64(86400), uint32(0), uint16(22*60), uint16(6*60), uint8(2), uint8(1))
	f.Add(int64(1325239200), int64(0), uint32(0), uint16(9*60), uint16(10*60), uint8(4), uint8(0))
	f.Add(int64(0), int64(0), uint32(0), uint16(0), uint16(0), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, nowSec, startOffset int64, delaySec uint32, wStart, wEnd uint16, zone, from uint8) {
		now := time.Unix(nowSec%(4<<30), 0).UTC() // 1834 … 2106
		recv := now.Add(time.Duration(startOffset%(400*86400)) * time.Second)
		delay := time.Duration(delaySec%(181*86400)) * time.Second
		p := sendtime.Plan{
			ReceivedAt:      recv,
			TransactionDate: recv.Add(-time.Duration(delaySec%(30*86400)) * time.Second),
			DeliveryDate:    recv.AddDate(0, 0, int(from%9)).Format(time.DateOnly),
			Delay:           "PT" + strconv.FormatInt(int64(delay/time.Second), 10) + "S",
			DelayFrom:       []string{"event", "transaction", "delivery", "bogus"}[from%4],
		}
		var w *sendtime.Window
		s, e := int(wStart%1440), int(wEnd%1440)
		if s != e && zone%10 != 9 {
			p.SendWindow = &sendtime.SendWindow{Start: clock(s), End: clock(e), TimeZone: fuzzZones[int(zone)%len(fuzzZones)]}
			pw, err := p.SendWindow.Parse()
			if err != nil {
				t.Fatalf("window %+v: %v", p.SendWindow, err)
			}
			w = &pw
		}
		got := sendtime.SendTime(now, p)
		if got.Before(now) {
			t.Fatalf("SendTime(%s, %+v) = %s, before now", now, p, got)
		}
		if w != nil && !w.Contains(got) {
			t.Fatalf("SendTime(%s, %+v) = %s (%s local), outside the window", now, p, got, got.In(w.Location))
		}
		// Never later than the latest possible start (the delivery date lies
		// up to 8 days after the arrival) plus the delay and a week's search
		// for an opening.
		latest := now
		if last := recv.AddDate(0, 0, 9); last.After(latest) {
			latest = last
		}
		if got.After(latest.Add(delay + 8*24*time.Hour)) {
			t.Fatalf("SendTime(%s, %+v) = %s, unreasonably late", now, p, got)
		}
	})
}

func clock(m int) string {
	return string([]byte{byte('0' + m/600), byte('0' + m/60%10), ':', byte('0' + m%60/10), byte('0' + m%10)})
}
