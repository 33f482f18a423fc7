package publication

import (
	"crypto/sha256"
	"sync"
)

// proofCache remembers the proofs signed last, so a page of reviews read
// again and again (the widget of a busy shop, a crawler) is not signed
// afresh each time: a proof depends only on the key and the claims, and
// Ed25519 signatures are deterministic, so a remembered proof is the one
// signing again would give. It keeps two generations of at most size
// entries each (about 1 KiB apiece): when the current one is full it
// becomes the previous one and the one before is dropped, so what is
// read keeps its place and memory stays bounded.
type proofCache struct {
	size int

	mu        sync.Mutex
	cur, prev map[[sha256.Size]byte]string
}

// proofCacheSize bounds each generation: 2 × 4,096 proofs, some 8 MiB.
const proofCacheSize = 4096

func newProofCache(size int) *proofCache {
	return &proofCache{size: size, cur: map[[sha256.Size]byte]string{}}
}

// proofKey names the proof of claims (JSON) signed with kid.
func proofKey(kid string, claims []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(kid))
	h.Write([]byte{0})
	h.Write(claims)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func (c *proofCache) get(k [sha256.Size]byte) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.cur[k]; ok {
		return p, true
	}
	p, ok := c.prev[k]
	if ok {
		c.putLocked(k, p) // still read: keep it
	}
	return p, ok
}

func (c *proofCache) put(k [sha256.Size]byte, proof string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, proof)
}

func (c *proofCache) putLocked(k [sha256.Size]byte, proof string) {
	if len(c.cur) >= c.size {
		c.prev, c.cur = c.cur, make(map[[sha256.Size]byte]string, c.size)
	}
	c.cur[k] = proof
}

// entries counts what is kept, for tests.
func (c *proofCache) entries() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.prev)
}
