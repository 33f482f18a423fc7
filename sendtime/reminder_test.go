package sendtime_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/sendtime"
)

func TestReminderPlan(t *testing.T) {
	t.Parallel()
	sent := utc("2026-03-02T10:00:00Z")
	inBerlin := sent.In(time.FixedZone("CET", 3600))
	berlin := &sendtime.SendWindow{Start: "09:00", End: "17:00", TimeZone: "Europe/Berlin"}
	tests := []struct {
		name   string
		sentAt *time.Time
		delay  string
		window *sendtime.SendWindow
		now    string
		want   string // the reminder's send time; "" when none is due
	}{
		{name: "invite not sent yet", sentAt: nil, delay: "P3D", now: "2026-03-02T10:00:00Z"},
		{name: "setting has no reminder", sentAt: &sent, delay: "", now: "2026-03-02T10:00:00Z"},
		{name: "delay counts from the send", sentAt: &sent, delay: "P3D", now: "2026-03-02T10:00:01Z",
			want: "2026-03-05T10:00:00Z"},
		{name: "send time in another zone is the same instant", sentAt: &inBerlin, delay: "PT12H",
			now: "2026-03-02T10:00:01Z", want: "2026-03-02T22:00:00Z"},
		{name: "due moves into the send window", sentAt: &sent, delay: "PT12H", window: berlin,
			now: "2026-03-02T10:00:01Z", want: "2026-03-03T08:00:00Z"},
		{name: "overdue is now", sentAt: &sent, delay: "P1D", now: "2026-03-10T12:00:00Z",
			want: "2026-03-10T12:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, ok := sendtime.ReminderPlan(tc.sentAt, tc.delay, tc.window)
			if tc.want == "" {
				assert.False(t, ok)
				assert.Equal(t, sendtime.Plan{}, p)
				return
			}
			assert.True(t, ok)
			assert.Equal(t, sendtime.FromEvent, p.DelayFrom)
			assert.Equal(t, time.UTC, p.ReceivedAt.Location())
			assert.Equal(t, tc.window, p.SendWindow)
			assert.Equal(t, utc(tc.want), sendtime.SendTime(utc(tc.now), p))
		})
	}
}
