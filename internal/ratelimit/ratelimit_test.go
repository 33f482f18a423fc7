package ratelimit_test

import (
	"encoding/binary"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/ratelimit"
)

var t0 = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

func TestBucket(t *testing.T) {
	t.Parallel()
	l := ratelimit.New[string](2, 3, 10) // 3 at once, then one per 500 ms
	for i := range 3 {
		ok, _ := l.Allow("a", t0)
		require.True(t, ok, "request %d of the burst", i+1)
	}
	ok, wait := l.Allow("a", t0)
	assert.False(t, ok)
	assert.Equal(t, 500*time.Millisecond, wait)
	assert.Equal(t, 500*time.Millisecond, l.Wait("a", t0), "a refused request took nothing")

	ok, _ = l.Allow("b", t0)
	assert.True(t, ok, "another key has its own bucket")

	ok, wait = l.Allow("a", t0.Add(200*time.Millisecond))
	assert.False(t, ok)
	assert.Equal(t, 300*time.Millisecond, wait)
	ok, _ = l.Allow("a", t0.Add(500*time.Millisecond))
	assert.True(t, ok, "refilled")
	ok, _ = l.Allow("a", t0.Add(500*time.Millisecond))
	assert.False(t, ok)

	ok, _ = l.Allow("a", t0.Add(time.Hour))
	assert.True(t, ok)
	for range 2 {
		ok, _ = l.Allow("a", t0.Add(time.Hour))
		assert.True(t, ok)
	}
	ok, _ = l.Allow("a", t0.Add(time.Hour))
	assert.False(t, ok, "an idle bucket refills to its burst, no more")
}

func TestWaitLeavesTheTableAlone(t *testing.T) {
	t.Parallel()
	l := ratelimit.New[string](1, 1, 2)
	assert.Zero(t, l.Wait("unknown", t0))
	assert.Zero(t, l.Len(), "asking adds no key")

	l.Allow("a", t0)
	l.Allow("b", t0)
	assert.Equal(t, time.Second, l.Wait("a", t0))
	l.Allow("c", t0) // evicts the least recently used: Wait did not make a recent
	assert.Zero(t, l.Wait("a", t0), "a was evicted")
	assert.Equal(t, time.Second, l.Wait("b", t0))
}

func TestLeastRecentlyUsedIsEvicted(t *testing.T) {
	t.Parallel()
	l := ratelimit.New[string](1, 1, 3)
	for _, k := range []string{"a", "b", "c"} {
		ok, _ := l.Allow(k, t0)
		require.True(t, ok)
	}
	l.Allow("a", t0) // refused, and now the most recent
	ok, _ := l.Allow("d", t0)
	require.True(t, ok)
	assert.Equal(t, 3, l.Len())
	for k, evicted := range map[string]bool{"a": false, "b": true, "c": false, "d": false} {
		assert.Equal(t, evicted, l.Wait(k, t0) == 0, "%s evicted", k)
	}
}

// TestAMillionAddressesStayWithinTheBound: a flood of distinct client
// addresses — a million, ten times the table — keeps the table at its
// capacity, in keys, in slots and in heap; the address in use all along
// keeps its bucket.
func TestAMillionAddressesStayWithinTheBound(t *testing.T) {
	t.Parallel()
	const capacity = 100_000
	l := ratelimit.New[netip.Addr](1, 20, capacity)
	steady := netip.MustParseAddr("2001:db8::1")
	addr := func(i int) netip.Addr {
		var b [16]byte
		b[0], b[1] = 0x20, 0x01
		binary.BigEndian.PutUint64(b[8:], uint64(i)+1)
		return netip.AddrFrom16(b)
	}
	for range 20 {
		l.Allow(steady, t0)
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for i := range capacity {
		l.Allow(addr(i), t0)
		if i%1000 == 0 {
			l.Allow(steady, t0)
		}
	}
	full := heap()
	for i := capacity; i < 1_000_000; i++ {
		l.Allow(addr(i), t0)
		if i%1000 == 0 {
			l.Allow(steady, t0)
		}
	}
	after := heap()
	assert.Equal(t, capacity, l.Len())
	assert.Equal(t, capacity, l.Cap(), "no slot beyond the capacity")
	assert.Less(t, after, full+8<<20, "the heap grew by %d bytes after the table was full", int64(after)-int64(full))
	t.Logf("heap with the table full: %d MiB", full>>20)
	assert.Equal(t, time.Second, l.Wait(steady, t0), "the address in use kept its (empty) bucket")
}
