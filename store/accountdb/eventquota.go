package accountdb

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/store/pg"
)

// The daily quota of accepted events, exact without a row that every
// accept of an account waits on. An account's count of a UTC day is kept
// in QuotaShards rows of account_daily_events, one per shard; the day's
// count is their sum. Each row has an allowance, the most it may count,
// and the allowances of the day add up to the quota (or to the count, if
// the quota was lowered below it), so the sum never exceeds the quota: a
// CHECK holds every row within its allowance.
//
// The fast path is part of the statement that stores the events
// (EventQuotaCTEs): a group of accepts counts its events on the row of
// one shard, which it locks, and an account's events are stored only if
// all of them fit in that row's room; else they are left alone (short).
// The slow path (LockEventCountsTx, ShareEventRoomTx) locks all of the
// day's rows of the account, makes those that are missing, reads the
// quota afresh and shares the room left out again. A row made by the
// fast path has no allowance and counts for an account without a quota;
// an account's rows carry the quota their allowances were shared for, so
// a changed quota sends its next accepts to the slow path, which shares
// for the new one.

// QuotaShards is the number of count rows per account and day.
const QuotaShards = 16

// EventQuotaCTEs are the common table expressions of the fast path, for a
// statement that has the CTE wanted (account_id, day, n): the events of
// each account and UTC day that may be new. They define quota (account_id,
// day, lim): each one's daily event quota (0: none, default defaultQuota,
// a parameter); fits (account_id, day, lim): those whose events all fit
// in the room of their row of shard (a parameter), which is locked; and,
// once the statement's CTE ev (RETURNING account_id, received_at) holds
// the events it stored, counted, which counts them on that row.
func EventQuotaCTEs(shard, defaultQuota string) string {
	return `quota AS (
    SELECT w.account_id, w.day, w.n, COALESCE(q.daily_events, ` + defaultQuota + `::int) AS lim
    FROM wanted w LEFT JOIN account_quotas q ON q.account_id = w.account_id
), room AS (
    SELECT d.account_id, d.day, d.allowance - d.events AS room
    FROM account_daily_events d JOIN quota w ON w.account_id = d.account_id AND w.day = d.day
    WHERE d.shard = ` + shard + ` AND w.lim > 0 AND d.quota = w.lim
    ORDER BY d.account_id, d.day
    FOR UPDATE OF d
), fits AS (
    SELECT w.account_id, w.day, w.lim FROM quota w LEFT JOIN room r ON r.account_id = w.account_id AND r.day = w.day
    WHERE w.lim = 0 OR r.room >= w.n
)`
}

// CountedEventsCTE is the CTE counted of EventQuotaCTEs (see there).
func CountedEventsCTE(shard string) string {
	return `counted AS (
    INSERT INTO account_daily_events AS d (account_id, day, shard, events, allowance, quota)
    SELECT f.account_id, f.day, ` + shard + `, count(*), CASE WHEN f.lim = 0 THEN NULL ELSE count(*) END, f.lim
    FROM ev JOIN fits f ON f.account_id = ev.account_id AND f.day = (ev.received_at AT TIME ZONE 'UTC')::date
    GROUP BY f.account_id, f.day, f.lim
    ORDER BY f.account_id, f.day
    ON CONFLICT (account_id, day, shard) DO UPDATE SET events = d.events + EXCLUDED.events,
        allowance = CASE WHEN EXCLUDED.quota = 0 THEN NULL ELSE d.allowance END, quota = EXCLUDED.quota
)`
}

// LockEventCountsTx makes the account's count rows of day (YYYY-MM-DD)
// that are missing, locks them all in shard order, and returns the
// account's daily event quota (0: none) and each shard's count.
func (s *Store) LockEventCountsTx(ctx context.Context, tx *sqlx.Tx, accountID, day string) (limit int, counts []int, err error) {
	q, err := s.QuotasTx(ctx, tx, accountID)
	if err != nil {
		return 0, nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO account_daily_events (account_id, day, shard, events, allowance, quota)
		SELECT $1, $2::date, s, 0, 0, $3 FROM generate_series(0, $4 - 1) s
		ON CONFLICT (account_id, day, shard) DO NOTHING`, accountID, day, q.DailyEvents, QuotaShards); err != nil {
		return 0, nil, fmt.Errorf("make the day's counts: %w", err)
	}
	var rows []struct {
		Shard  int `db:"shard"`
		Events int `db:"events"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT shard, events FROM account_daily_events
		WHERE account_id = $1 AND day = $2::date ORDER BY shard FOR UPDATE`, accountID, day); err != nil {
		return 0, nil, fmt.Errorf("lock the day's counts: %w", err)
	}
	counts = make([]int, QuotaShards)
	for _, r := range rows {
		if r.Shard >= 0 && r.Shard < QuotaShards {
			counts[r.Shard] = r.Events
		}
	}
	return q.DailyEvents, counts, nil
}

// ShareEventRoomTx sets the allowances of the account's count rows of
// day, which tx holds locked (LockEventCountsTx), for limit (0: none):
// each row may count its count (counts) and its share of room, all of it
// on shard to, or shared evenly when to is -1.
func (s *Store) ShareEventRoomTx(ctx context.Context, tx *sqlx.Tx, accountID, day string, limit int, counts []int, room, to int) error {
	shards := make([]int, len(counts))
	allowances := make([]*int, len(counts))
	for i, n := range counts {
		shards[i] = i
		if limit == 0 {
			continue
		}
		share := 0
		switch {
		case i == to:
			share = room
		case to < 0:
			share = room / len(counts)
			if i < room%len(counts) {
				share++
			}
		}
		a := n + share
		allowances[i] = &a
	}
	_, err := tx.ExecContext(ctx, `UPDATE account_daily_events d SET allowance = u.allowance, quota = $3
		FROM unnest($4::int[], $5::int[]) AS u (shard, allowance)
		WHERE d.account_id = $1 AND d.day = $2::date AND d.shard = u.shard`,
		accountID, day, limit, pq.Array(shards), pq.Array(allowances))
	if err != nil {
		return fmt.Errorf("share the day's room: %w", err)
	}
	return nil
}

// ExhaustedFor is how long an account found with no room left in its
// daily event quota is refused without the slow path: a quota raised
// meanwhile takes effect on another process at most this much later.
const ExhaustedFor = time.Second

// exhausted remembers, per account and day, until when the account is
// known to have no room.
type exhausted struct {
	mu sync.Mutex
	m  map[[2]string]exhaustedUntil
}

type exhaustedUntil struct {
	until time.Time
	limit int
}

// Exhausted reports whether the account was found without room in its
// event quota of day less than ExhaustedFor ago, and that quota.
func (s *Store) Exhausted(accountID, day string) (limit int, ok bool) {
	x := &s.exhausted
	x.mu.Lock()
	defer x.mu.Unlock()
	e, ok := x.m[[2]string{accountID, day}]
	return e.limit, ok && time.Now().Before(e.until)
}

// MarkExhausted records that the account has no room in its event quota
// (limit) of day.
func (s *Store) MarkExhausted(accountID, day string, limit int) {
	x := &s.exhausted
	x.mu.Lock()
	defer x.mu.Unlock()
	now := time.Now()
	if x.m == nil {
		x.m = map[[2]string]exhaustedUntil{}
	}
	for k, e := range x.m { // a few accounts at most
		if !now.Before(e.until) {
			delete(x.m, k)
		}
	}
	x.m[[2]string{accountID, day}] = exhaustedUntil{until: now.Add(ExhaustedFor), limit: limit}
}

// forget drops what is remembered of the account.
func (x *exhausted) forget(accountID string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for k := range x.m {
		if k[0] == accountID {
			delete(x.m, k)
		}
	}
}

// Limit is one quota of an account and what of it is used: today's count
// for a daily quota, the number of resources for a resource quota. Limit
// 0 means no limit.
type Limit struct {
	Limit int `db:"limit"`
	Used  int `db:"used"`
}

// Limits are an account's quotas in force with their use.
type Limits struct {
	DailySends        Limit
	RecipientDailyCap int // per address: no single use to show
	DailyEvents       Limit
	Channels          Limit
	EventTypes        Limit
	WebhookEndpoints  Limit
}

// AccountLimits returns the account's quotas in force and their use today
// (UTC).
func (s *Store) AccountLimits(ctx context.Context, accountID string) (Limits, error) {
	q, err := s.QuotasTx(ctx, s.db, accountID)
	if err != nil {
		return Limits{}, err
	}
	var used struct {
		Sends    int `db:"sends"`
		Events   int `db:"events"`
		Channels int `db:"channels"`
		Types    int `db:"event_types"`
		Webhooks int `db:"webhooks"`
	}
	err = s.db.GetContext(ctx, &used, `SELECT
		COALESCE((SELECT sends FROM account_daily_sends WHERE account_id = $1 AND day = $2::date), 0) AS sends,
		(SELECT COALESCE(sum(events), 0) FROM account_daily_events WHERE account_id = $1 AND day = $2::date) AS events,
		(SELECT count(*) FROM channels WHERE account_id = $1) AS channels,
		(SELECT count(*) FROM event_types WHERE account_id = $1) AS event_types,
		(SELECT count(*) FROM webhook_endpoints WHERE account_id = $1) AS webhooks`,
		accountID, s.Now().UTC().Format(time.DateOnly))
	if err != nil {
		return Limits{}, fmt.Errorf("read quota use: %w", pg.Translate(err))
	}
	return Limits{
		DailySends:        Limit{q.DailySends, used.Sends},
		RecipientDailyCap: q.RecipientDailyCap,
		DailyEvents:       Limit{q.DailyEvents, used.Events},
		Channels:          Limit{q.Channels, used.Channels},
		EventTypes:        Limit{q.EventTypes, used.Types},
		WebhookEndpoints:  Limit{q.WebhookEndpoints, used.Webhooks},
	}, nil
}
