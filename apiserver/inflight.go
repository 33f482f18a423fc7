package apiserver

import "sync"

// DefaultBatchInflightBytes is the default cap on the request bytes of
// POST /events/batch in flight in one API process.
const DefaultBatchInflightBytes = 64 << 20

// byteBudget caps the bytes that requests hold at once in one process:
// a request reserves its body's size before reading it and gives it back
// when its answer is decided. A reservation that does not fit is refused
// at once, never queued: waiting requests would hold their connections,
// and the client is better told to come back (503 with Retry-After).
type byteBudget struct {
	mu    sync.Mutex
	limit int64
	used  int64
}

func newByteBudget(limit int64) *byteBudget { return &byteBudget{limit: limit} }

// reserve takes n bytes of the budget if they fit, and reports whether
// they did.
func (b *byteBudget) reserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// release gives back n bytes reserved before.
func (b *byteBudget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
}
