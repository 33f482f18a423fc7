-- Quotas of everything an account can make: its webhook endpoints, and
-- the events it may have accepted per UTC day. A NULL column takes the
-- process default (TOUCHPOINT_WEBHOOK_QUOTA, TOUCHPOINT_DAILY_EVENT_QUOTA);
-- 0 means no limit.
ALTER TABLE account_quotas
    ADD COLUMN webhook_endpoints integer CHECK (webhook_endpoints >= 0),
    ADD COLUMN daily_events      integer CHECK (daily_events >= 0);

-- Events an account had accepted per UTC day (a repeat of an accepted
-- event is not counted). Rows live two days (housekeeping).
CREATE TABLE account_daily_events (
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    day        date NOT NULL,
    events     integer NOT NULL CHECK (events >= 0),
    PRIMARY KEY (account_id, day)
);
CREATE INDEX account_daily_events_day ON account_daily_events (day);
