// Package syncbuf is a buffer that many goroutines may write at once and
// read meanwhile: a child process's output, a logger's, a browser's.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer behind a mutex; its zero value is ready.
type Buffer struct {
	// Max, when set, keeps only the last Max bytes written: the end of a
	// long-running child's output is what explains its failure.
	Max int

	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if over := b.buf.Len() - b.Max; b.Max > 0 && over > 0 {
		b.buf.Next(over)
	}
	return n, err
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Tail is the last n bytes written, after "…" when there were more.
func (b *Buffer) Tail(n int) string {
	s := b.String()
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
