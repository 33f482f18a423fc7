package httpmw

import (
	"errors"
	"io"
	"sync"
)

// accountShare is the part of the budget one account may hold: a
// quarter, so one account's uploads always leave room for the others'.
const accountShare = 4

// readChunk is how much of a body is read at a time: the bytes a
// connection reads beyond what the budget counted.
const readChunk = 32 << 10

// chunks are the buffers bodies are read into, kept for the next body:
// a body grown by append would leave several times its size behind for
// the collector.
var chunks = sync.Pool{New: func() any { return new([readChunk]byte) }}

// ByteBudget caps the bytes that requests hold at once in one process,
// and the part of them one account holds. Bytes are counted as they are
// read, never as a request declares them, so a client that declares much
// and sends little holds little; they are given back when the request's
// answer is decided. A read that does not fit is refused at once, never
// queued: waiting requests would hold their connections, and the client
// is better told to come back (503 with Retry-After).
type ByteBudget struct {
	mu        sync.Mutex
	limit     int64 // the process's
	share     int64 // one account's
	used      int64
	byAccount map[string]int64
}

// NewByteBudget is a budget of limit bytes, a quarter of them for one
// account.
func NewByteBudget(limit int64) *ByteBudget {
	return &ByteBudget{limit: limit, share: limit / accountShare, byAccount: map[string]int64{}}
}

// Why a read did not fit.
var (
	ErrProcessBytes = errors.New("the process holds as many batch bytes as it may")
	ErrAccountBytes = errors.New("the account holds as many batch bytes as it may")
)

// Limit is the bytes the process may hold.
func (b *ByteBudget) Limit() int64 { return b.limit }

// Share is the bytes one account may hold.
func (b *ByteBudget) Share() int64 { return b.share }

// Held is the bytes held now.
func (b *ByteBudget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// HeldBy is the bytes one account holds now.
func (b *ByteBudget) HeldBy(account string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byAccount[account]
}

// take counts n more bytes held for the account if they fit both its
// share and the process's limit.
func (b *ByteBudget) take(account string, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.byAccount[account]+n > b.share:
		return ErrAccountBytes
	case b.used+n > b.limit:
		return ErrProcessBytes
	}
	b.used += n
	b.byAccount[account] += n
	return nil
}

// Give gives back n bytes the account took.
func (b *ByteBudget) Give(account string, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if b.byAccount[account] -= n; b.byAccount[account] <= 0 {
		delete(b.byAccount, account)
	}
}

// Read reads body whole, at most limit bytes (ErrTooLarge above), taking
// the bytes from the account's budget as they arrive. It returns what it
// read and how many bytes it holds — also on error: the caller gives
// them back once the request's answer is decided.
func (b *ByteBudget) Read(account string, body io.Reader, limit int64) (data []byte, held int64, err error) {
	var read []*[readChunk]byte // the body is their first held bytes
	defer func() {
		for _, c := range read {
			chunks.Put(c)
		}
	}()
	for {
		if held == int64(len(read))*readChunk { // the last chunk is full
			read = append(read, chunks.Get().(*[readChunk]byte))
		}
		off := int(held % readChunk)
		n, rerr := body.Read(read[len(read)-1][off:min(readChunk, off+int(limit+1-held))])
		if n > 0 {
			if err := b.take(account, int64(n)); err != nil {
				return nil, held, err
			}
			if held += int64(n); held > limit {
				return nil, held, ErrTooLarge
			}
		}
		switch {
		case rerr == io.EOF:
			data = make([]byte, 0, held)
			for _, c := range read {
				data = append(data, c[:min(readChunk, held-int64(len(data)))]...)
			}
			return data, held, nil
		case rerr != nil:
			return nil, held, rerr
		}
	}
}
