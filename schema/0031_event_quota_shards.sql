-- The daily event quota without a row that every accept of an account
-- waits on: an account's count of a day is kept in several rows, one per
-- shard, which the accepts of the day share (a group of accepts counts
-- on one shard, drawn at random); the day's count is their sum. Each row
-- may count up to its allowance; the allowances of a day add up to the
-- quota they were shared for (quota; 0: none, and no allowance), so the
-- count never exceeds it. A row of before becomes shard 0, with no
-- allowance: its account's next accept shares the quota out afresh.
ALTER TABLE account_daily_events
    ADD COLUMN shard smallint NOT NULL DEFAULT 0 CHECK (shard >= 0),
    ADD COLUMN allowance integer,
    ADD COLUMN quota integer NOT NULL DEFAULT 0 CHECK (quota >= 0),
    ADD CONSTRAINT account_daily_events_within_allowance CHECK (allowance IS NULL OR events <= allowance),
    DROP CONSTRAINT account_daily_events_pkey,
    ADD PRIMARY KEY (account_id, day, shard);
ALTER TABLE account_daily_events ALTER COLUMN shard DROP DEFAULT;
