package publication

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The cache keeps at most two generations, and a proof that is read again
// survives the turn of a generation while one that is not goes.
func TestProofCacheStaysBounded(t *testing.T) {
	t.Parallel()
	c := newProofCache(3)
	key := func(i int) [32]byte { return proofKey("kid", []byte(strconv.Itoa(i))) }
	for i := range 100 {
		c.put(key(i), strconv.Itoa(i))
		if i == 1 || i%2 == 1 {
			_, ok := c.get(key(1)) // read all along
			assert.True(t, ok, "read before each turn, so kept (after %d)", i)
		}
		assert.LessOrEqual(t, c.entries(), 6)
	}
	_, ok := c.get(key(0))
	assert.False(t, ok, "never read again: gone")
	p, ok := c.get(key(99))
	assert.True(t, ok)
	assert.Equal(t, "99", p)
	assert.NotEqual(t, proofKey("kid", []byte("a")), proofKey("other", []byte("a")), "another key, another proof")
}
