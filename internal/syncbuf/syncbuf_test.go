package syncbuf

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestConcurrentWritesAllLand(t *testing.T) {
	t.Parallel()
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x"))
			}
		})
	}
	wg.Wait()
	assert.Equal(t, strings.Repeat("x", 800), b.String())
}

func TestMaxKeepsTheEnd(t *testing.T) {
	t.Parallel()
	b := Buffer{Max: 5}
	n, err := b.Write([]byte("abcdefgh"))
	assert.NoError(t, err)
	assert.Equal(t, 8, n, "a write reports every byte taken")
	b.Write([]byte("ij"))
	assert.Equal(t, "fghij", b.String())
	assert.Equal(t, "…ij", b.Tail(2))
	assert.Equal(t, "fghij", b.Tail(10))
}
