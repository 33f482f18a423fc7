package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestSummarizeInvites: the rate spans the first arrival to the last
// send, and the largest lag past the due time (arrival, for bench's
// immediate invites) is the slowest sent invite's; unsent ones count in
// neither.
func TestSummarizeInvites(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	ev := func(received, sent time.Duration, status string) benchEvent {
		var e benchEvent
		e.ReceivedAt = at.Add(received)
		e.Invite.Status = status
		if status == "sent" {
			s := at.Add(sent)
			e.Invite.SentAt = &s
		}
		return e
	}
	var res Result
	summarizeInvites(&res, []benchEvent{
		ev(0, 2*time.Second, "sent"),
		ev(time.Second, 41500*time.Millisecond, "sent"), // 40.5 s late
		ev(2*time.Second, 9*time.Second, "sent"),
		ev(3*time.Second, 0, "failed"),
	})
	assert.Equal(t, 3, res.InvitesSent)
	assert.Equal(t, 40500.0, res.InviteLagMaxMS)
	assert.Equal(t, round(3/41.5, 1), res.InvitesPerS)

	var none Result
	summarizeInvites(&none, nil)
	assert.Zero(t, none.InviteLagMaxMS)
}
