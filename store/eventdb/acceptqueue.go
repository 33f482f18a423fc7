package eventdb

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/store/accountdb"
)

// Group commit of accepts. A single accept is one statement and one
// commit; under load most of its cost is the round trip, the planning of
// that statement and the commit, not the rows it writes. So concurrent
// accepts queue up, and whoever finds a free flush slot writes everything
// queued in one statement (one commit). No request waits for a timer: a
// lone request is flushed at once, and a group grows only from the
// requests that arrived while the groups before it were being written.
// Every request still gets its 202 only after its own rows have
// committed.
//
// Requests with an Idempotency-Key join the groups too. Two requests with
// the same key never share a group, nor are they in flight at once: the
// later one waits in the queue until the earlier one's group has
// committed, and then finds its key taken (a replay or a mismatch).
const (
	// Statements in flight at once: one group is written while the one
	// before it waits for its commit's WAL flush. More groups in flight
	// are smaller, and their commits queue behind each other's flushes;
	// see docs/performance.md.
	acceptFlushers = 2
	acceptGroupMax = 64 // events per statement
	// acceptGroupTimeout bounds one group's statement, which no single
	// request's cancellation may abort.
	acceptGroupTimeout = 15 * time.Second
)

// acceptQueue is the group commit's queue; its zero value is ready.
type acceptQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	waiting  []*acceptCall
	flushing int
	// keys are the idempotency keys of the calls in flight.
	keys map[[2]string]bool
	// shards are the quota shards of the groups in flight: each group
	// counts on one the others do not lock.
	shards map[int]bool
}

// accept queues c and returns once c's outcome is set. The caller
// flushes groups itself (its own and others') while a flush slot is
// free, and waits for another flusher otherwise.
func (q *acceptQueue) accept(s *Store, c *acceptCall) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cond == nil {
		q.cond = sync.NewCond(&q.mu)
		q.keys = map[[2]string]bool{}
		q.shards = map[int]bool{}
	}
	q.waiting = append(q.waiting, c)
	for !c.done {
		var group []*acceptCall
		if q.flushing < acceptFlushers {
			group = q.take()
		}
		if len(group) == 0 {
			q.cond.Wait()
			continue
		}
		q.flushing++
		shard := rand.IntN(accountdb.QuotaShards)
		for q.shards[shard] {
			shard = (shard + 1) % accountdb.QuotaShards
		}
		q.shards[shard] = true
		q.mu.Unlock()
		s.flush(group, shard)
		q.mu.Lock()
		q.flushing--
		delete(q.shards, shard)
		for _, g := range group {
			g.done = true
			if k, ok := idempotencyKey(g); ok {
				delete(q.keys, k)
			}
		}
		q.cond.Broadcast()
	}
}

// take removes the next group from the queue, in arrival order: up to
// acceptGroupMax calls, leaving in the queue any whose key is in flight
// or already in the group.
func (q *acceptQueue) take() []*acceptCall {
	var group []*acceptCall
	rest := q.waiting[:0]
	for _, c := range q.waiting {
		k, keyed := idempotencyKey(c)
		if len(group) == acceptGroupMax || (keyed && q.keys[k]) {
			rest = append(rest, c)
			continue
		}
		if keyed {
			q.keys[k] = true
		}
		group = append(group, c)
	}
	clear(q.waiting[len(rest):])
	q.waiting = rest
	return group
}

// idempotencyKey is c's account and key, if it has one.
func idempotencyKey(c *acceptCall) ([2]string, bool) {
	return [2]string{c.event.AccountID, c.event.IdempotencyKey}, c.event.IdempotencyKey != ""
}

// flush writes the live calls of group, counting them on quota shard,
// and sets each one's outcome.
func (s *Store) flush(group []*acceptCall, shard int) {
	live := group[:0:0]
	for _, c := range group {
		if err := c.ctx.Err(); err != nil {
			c.err = err // its client is gone; nothing was written
			continue
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(live[0].ctx), acceptGroupTimeout)
	defer cancel()
	err := s.acceptAll(ctx, live, shard, singleHeadStart)
	if err == nil {
		return
	}
	// PostgreSQL refused the statement, so it rolled back: one request
	// must not fail the others, so each is tried alone. Any other error
	// (the connection) is every request's answer, since a retry could
	// meet a commit whose answer was lost.
	var pqErr *pq.Error
	refused := errors.As(err, &pqErr) && len(live) > 1
	for _, c := range live {
		if refused {
			if err := s.acceptAll(ctx, []*acceptCall{c}, shard, singleHeadStart); err != nil {
				c.res, c.err = Accepted{}, err
			}
		} else {
			c.res, c.err = Accepted{}, err
		}
	}
}
