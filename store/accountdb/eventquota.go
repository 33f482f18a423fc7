package accountdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/touchpoint/touchpoint/store/pg"
)

// The daily quota of accepted events is counted apart from the accept
// itself, in a statement of its own whose commit does not wait for the
// disk (synchronous_commit off): every accept of an account passes the
// account's one counter row, and holding its lock through a durable
// commit would put the account's accepts in single file. A crash may lose
// the last counts, so a day's count may fall a little short, never over.

// takeEventsSQL counts up to $3 events on the account's row of day $2 and
// returns how many it counted: all of them while the quota $4 (0: none)
// has room, then what room is left.
const takeEventsSQL = `
UPDATE account_daily_events d SET events = d.events + g.granted
FROM (SELECT account_id, day,
             CASE WHEN $4::int = 0 THEN $3::int ELSE LEAST($3::int, GREATEST($4::int - events, 0)) END AS granted
      FROM account_daily_events WHERE account_id = $1 AND day = $2::date FOR UPDATE) g,
     (SELECT set_config('synchronous_commit', 'off', true)) c
WHERE d.account_id = g.account_id AND d.day = g.day
RETURNING g.granted`

// firstEventsSQL makes the account's row of the day, counting up to $3.
const firstEventsSQL = `
INSERT INTO account_daily_events (account_id, day, events)
SELECT $1, $2::date, CASE WHEN $4::int = 0 THEN $3::int ELSE LEAST($3::int, $4::int) END
FROM (SELECT set_config('synchronous_commit', 'off', true)) c
ON CONFLICT (account_id, day) DO NOTHING
RETURNING events`

// TakeEventQuota counts up to n events about to be accepted for the
// account today (UTC) against its daily event quota. It returns how many
// it counted (granted, at most n: those events may be accepted, the rest
// are over quota) and the quota (0: none). Events counted but then not
// accepted as new (invalid, or a repeat of an accepted event) are given
// back with ReturnEventQuota.
func (s *Store) TakeEventQuota(ctx context.Context, accountID string, n int) (granted, limit int, err error) {
	if n <= 0 {
		return 0, 0, nil
	}
	q, err := s.QuotasTx(ctx, s.db, accountID)
	if err != nil {
		return 0, 0, err
	}
	day := s.Now().UTC().Format(time.DateOnly)
	for range 2 { // a concurrent first count of the day makes the row: count on it
		err = s.db.GetContext(ctx, &granted, takeEventsSQL, accountID, day, n, q.DailyEvents)
		if errors.Is(err, sql.ErrNoRows) {
			err = s.db.GetContext(ctx, &granted, firstEventsSQL, accountID, day, n, q.DailyEvents)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			break
		}
	}
	if err != nil {
		return 0, 0, fmt.Errorf("count accepted events: %w", pg.Translate(err))
	}
	if granted < n {
		s.Refuse(QuotaEvents, q.DailyEvents)
	}
	return granted, q.DailyEvents, nil
}

// ReturnEventQuota gives back n events counted today by TakeEventQuota
// that were not accepted as new.
func (s *Store) ReturnEventQuota(ctx context.Context, accountID string, n int) error {
	if n <= 0 {
		return nil
	}
	_, err := s.db.ExecContext(ctx, `UPDATE account_daily_events d SET events = GREATEST(d.events - $3, 0)
		FROM (SELECT set_config('synchronous_commit', 'off', true)) c
		WHERE d.account_id = $1 AND d.day = $2::date`, accountID, s.Now().UTC().Format(time.DateOnly), n)
	if err != nil {
		return fmt.Errorf("give back counted events: %w", pg.Translate(err))
	}
	return nil
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
		COALESCE((SELECT events FROM account_daily_events WHERE account_id = $1 AND day = $2::date), 0) AS events,
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
