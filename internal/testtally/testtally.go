// Package testtally counts what a test is told, by name, from any
// goroutine: the refusals a store reports to its OnQuotaExceeded hook.
package testtally

import (
	"maps"
	"sync"
)

// Tally counts names; its zero value is ready.
type Tally struct {
	mu sync.Mutex
	m  map[string]int
}

// Add counts one more of name.
func (t *Tally) Add(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]int{}
	}
	t.m[name]++
}

// Counts is a copy of the counts so far.
func (t *Tally) Counts() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]int{}
	maps.Copy(out, t.m)
	return out
}
