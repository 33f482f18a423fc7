// Package ratelimit keeps token buckets per key — an API client, a client
// address, a (client, address) pair — in a table of fixed capacity, so
// that however many keys arrive the memory stays bounded.
//
// The table is an LRU: when it is full, a new key takes the slot of the
// key used least recently. Its slots are allocated as keys arrive, never
// beyond the capacity, and reused after that; a key evicted starts again
// with a full bucket when it comes back. So a flood of distinct keys costs
// at most the table (and may let a key that was waiting start afresh), but
// never blocks another key and never grows memory. Pick a capacity well
// above the number of keys active within a bucket's refill time.
//
// Buckets are the usual token buckets: Burst tokens, refilled at Rate per
// second. A Limiter is safe for concurrent use.
package ratelimit

import (
	"sync"
	"time"
)

// Limiter is a bounded table of token buckets keyed by K.
type Limiter[K comparable] struct {
	rate     float64 // tokens per second
	burst    float64
	capacity int

	mu    sync.Mutex
	index map[K]int32 // key → slot
	slots []slot[K]   // grows to capacity, then reused
	head  int32       // most recently used slot, -1 when empty
	tail  int32       // least recently used slot
}

// slot is one key's bucket and its place in the recency list.
type slot[K comparable] struct {
	key        K
	tokens     float64
	at         time.Time // when tokens was computed
	prev, next int32     // towards head, towards tail; -1 at the ends
}

// New returns a Limiter of buckets holding burst tokens, refilled at
// perSecond, for at most capacity keys at once.
func New[K comparable](perSecond float64, burst, capacity int) *Limiter[K] {
	if perSecond <= 0 || burst < 1 || capacity < 1 {
		panic("ratelimit.New: rate, burst and capacity must be positive")
	}
	return &Limiter[K]{rate: perSecond, burst: float64(burst), capacity: capacity,
		index: make(map[K]int32), head: -1, tail: -1}
}

// Allow takes a token from key's bucket. When there is none it takes
// nothing and says how long until there is one.
func (l *Limiter[K]) Allow(key K, now time.Time) (ok bool, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := &l.slots[l.touch(key, now)]
	s.refill(l, now)
	if s.tokens >= 1 {
		s.tokens--
		return true, 0
	}
	return false, l.wait(s.tokens)
}

// Wait says how long until key may take a token (0: now) without taking
// one, making its bucket recent, or adding a key that has none.
func (l *Limiter[K]) Wait(key K, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.index[key]
	if !ok {
		return 0
	}
	s := l.slots[i] // a copy: nothing changes
	s.refill(l, now)
	if s.tokens >= 1 {
		return 0
	}
	return l.wait(s.tokens)
}

// Len is how many keys the table holds (at most its capacity).
func (l *Limiter[K]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.index)
}

// Cap is how many slots the table has allocated (at most its capacity).
func (l *Limiter[K]) Cap() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return cap(l.slots)
}

func (l *Limiter[K]) wait(tokens float64) time.Duration {
	return time.Duration((1 - tokens) / l.rate * float64(time.Second))
}

func (s *slot[K]) refill(l *Limiter[K], now time.Time) {
	if elapsed := now.Sub(s.at); elapsed > 0 {
		s.tokens = min(l.burst, s.tokens+elapsed.Seconds()*l.rate)
		s.at = now
	}
}

// touch returns key's slot, made most recent: its own, or a new one with a
// full bucket — a fresh slot while the table has room, else the least
// recently used key's.
func (l *Limiter[K]) touch(key K, now time.Time) int32 {
	if i, ok := l.index[key]; ok {
		l.unlink(i)
		l.pushFront(i)
		return i
	}
	var i int32
	if len(l.slots) < l.capacity {
		if len(l.slots) == cap(l.slots) {
			// Grow as append would, but never past the capacity.
			grown := make([]slot[K], len(l.slots), min(max(2*cap(l.slots), 16), l.capacity))
			copy(grown, l.slots)
			l.slots = grown
		}
		l.slots = append(l.slots, slot[K]{})
		i = int32(len(l.slots) - 1)
	} else {
		i = l.tail
		l.unlink(i)
		delete(l.index, l.slots[i].key)
	}
	l.slots[i] = slot[K]{key: key, tokens: l.burst, at: now}
	l.index[key] = i
	l.pushFront(i)
	return i
}

func (l *Limiter[K]) unlink(i int32) {
	s := &l.slots[i]
	if s.prev >= 0 {
		l.slots[s.prev].next = s.next
	} else {
		l.head = s.next
	}
	if s.next >= 0 {
		l.slots[s.next].prev = s.prev
	} else {
		l.tail = s.prev
	}
}

func (l *Limiter[K]) pushFront(i int32) {
	s := &l.slots[i]
	s.prev, s.next = -1, l.head
	if l.head >= 0 {
		l.slots[l.head].prev = i
	}
	l.head = i
	if l.tail < 0 {
		l.tail = i
	}
}
