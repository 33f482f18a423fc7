package eventdb

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// The slow path of the daily event quota (see accountdb.EventQuotaCTEs):
// the calls the accept statement left short, because the quota row of
// its shard had no room for all of its account's events, are taken per
// account and day in a transaction that locks all of the day's count
// rows, reads the quota afresh, gives all the room left to shard 0 and
// accepts the calls on it in order, each run taking no more calls than
// there is room, so all of its events fit; once there is none, one more
// run answers the rest (a replay, an unknown type) and what it leaves
// short is over quota. Then the room left is shared evenly again for the
// fast path.

// acceptShort is the slow path of short. A call that finds no room is an
// *accountdb.QuotaError; a failure is the error of every call of its
// account and day.
func (s *Store) acceptShort(ctx context.Context, short []*acceptCall, headStart string) {
	type day struct{ account, day string }
	byDay := map[day][]*acceptCall{}
	var order []day
	for _, c := range short {
		d := day{c.event.AccountID, dayOf(c.now)}
		if _, ok := byDay[d]; !ok {
			order = append(order, d)
		}
		byDay[d] = append(byDay[d], c)
	}
	for _, d := range order {
		calls := byDay[d]
		if limit, ok := s.accounts.Exhausted(d.account, d.day); ok {
			s.overQuota(calls, limit)
			continue
		}
		if err := s.acceptShortDay(ctx, d.account, d.day, calls, headStart); err != nil {
			for _, c := range calls {
				c.res, c.err, c.short = Accepted{}, err, false
			}
		}
	}
}

// overQuota answers calls as over the daily event quota limit.
func (s *Store) overQuota(calls []*acceptCall, limit int) {
	for _, c := range calls {
		c.res, c.err, c.short = Accepted{}, s.accounts.Refuse(accountdb.QuotaEvents, limit), false
	}
}

// acceptShortDay is acceptShort for the calls of one account and day.
func (s *Store) acceptShortDay(ctx context.Context, account, day string, calls []*acceptCall, headStart string) error {
	// Prepared on the pool before the transaction begins (see
	// pg.Stmt.On).
	if _, err := s.acceptStmt.Prepare(ctx); err != nil {
		return fmt.Errorf("accept events: %w", pg.Translate(err))
	}
	var limit int
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var counts []int
		var err error
		if limit, counts, err = s.accounts.LockEventCountsTx(ctx, tx, account, day); err != nil {
			return err
		}
		used := 0
		for _, n := range counts {
			used += n
		}
		room := max(limit-used, 0)
		if err := s.accounts.ShareEventRoomTx(ctx, tx, account, day, limit, counts, room, 0); err != nil {
			return err
		}
		for pending := calls; len(pending) > 0; {
			take := len(pending)
			if limit > 0 && room > 0 {
				take = min(take, room)
			}
			run := pending[:take]
			if err := s.runAccept(ctx, tx, run, 0, headStart); err != nil {
				return err
			}
			for _, c := range run {
				if c.res.EventID != "" {
					counts[0]++
					room--
				}
			}
			pending = pending[take:]
		}
		return s.accounts.ShareEventRoomTx(ctx, tx, account, day, limit, counts, max(room, 0), -1)
	})
	if err != nil {
		return fmt.Errorf("accept events over the quota's slow path: %w", err)
	}
	var over []*acceptCall
	for _, c := range calls {
		if c.short {
			over = append(over, c)
		}
	}
	if len(over) > 0 {
		s.accounts.MarkExhausted(account, day, limit)
		s.overQuota(over, limit)
	}
	return nil
}
