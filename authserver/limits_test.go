package authserver

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFailureLimitsStayBoundedAndKeepRecentBuckets(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f := newFailureLimits(100)
	victim, attacker := "cli-victim", netip.MustParseAddr("198.51.100.7")
	for range pairBurst {
		f.fail(victim, attacker, now)
	}
	assert.Positive(t, f.wait(victim, attacker, now), "the guesser is limited")

	// A flood of other keys, each failing once, interleaved with the
	// guesser's own failures: the tables stay bounded and the guesser's
	// bucket, failing most recently, is never the one evicted.
	for i := range 10_000 {
		f.fail(fmt.Sprintf("cli-%d", i), netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), now)
		if i%50 == 0 {
			f.fail(victim, attacker, now)
		}
	}
	pairs, addrs := f.sizes()
	assert.LessOrEqual(t, pairs, 100)
	assert.LessOrEqual(t, addrs, 100)
	assert.Positive(t, f.wait(victim, attacker, now), "still limited: its counter was not reset")
	assert.Zero(t, f.wait(victim, netip.MustParseAddr("203.0.113.1"), now), "the client elsewhere is not")
}

func TestBlockedAttemptsDoNotRefreshABucket(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f := newFailureLimits(2)
	a, b, c := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("192.0.2.3")
	for range addrBurst {
		f.fail("", a, now)
		f.fail("", b, now)
	}
	assert.Positive(t, f.wait("", a, now)) // a peek: a stays the least recent
	f.fail("", c, now)
	_, addrs := f.sizes()
	assert.Equal(t, 2, addrs)
	assert.Zero(t, f.wait("", a, now), "a was evicted")
	assert.Positive(t, f.wait("", b, now), "b was kept")
}
