package httpmw

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A body read through the budget is the body, whatever the sizes of the
// reads, and counts exactly its bytes; one over the limit, or over the
// account's share, is refused with what it took so far.
func TestBudgetReadKeepsTheBody(t *testing.T) {
	t.Parallel()
	readers := map[string]func(io.Reader) io.Reader{
		"whole":   func(r io.Reader) io.Reader { return r },
		"one":     iotest.OneByteReader,
		"half":    iotest.HalfReader,
		"dataErr": iotest.DataErrReader,
	}
	for _, size := range []int{0, 1, readChunk - 1, readChunk, readChunk + 1, 3*readChunk + 7} {
		body := make([]byte, size)
		for i := range body {
			body[i] = byte(rand.IntN(256))
		}
		for name, wrap := range readers {
			b := NewByteBudget(4 * (4*readChunk + 8))
			data, held, err := b.Read("acc", wrap(bytes.NewReader(body)), int64(size))
			require.NoError(t, err, "%s %d", name, size)
			assert.Equal(t, body, data, "%s %d", name, size)
			assert.Equal(t, int64(size), held)
			assert.Equal(t, int64(size), b.byAccount["acc"])
			b.Give("acc", held)
			assert.Zero(t, b.used)
			assert.Empty(t, b.byAccount)

			if size > 0 {
				_, held, err = b.Read("acc", wrap(bytes.NewReader(body)), int64(size-1))
				assert.ErrorIs(t, err, ErrTooLarge, "%s %d", name, size)
				assert.Equal(t, held, b.used, "what it took is for the caller to give back")
				b.Give("acc", held)
			}
		}
	}
	b := NewByteBudget(4 * readChunk)
	_, held, err := b.Read("acc", bytes.NewReader(make([]byte, readChunk+1)), 8<<20)
	assert.ErrorIs(t, err, ErrAccountBytes)
	assert.Equal(t, int64(readChunk), held, "the share is a quarter")
	other, _, err := b.Read("other", bytes.NewReader(make([]byte, readChunk)), 8<<20)
	assert.NoError(t, err)
	assert.Len(t, other, readChunk)
}
