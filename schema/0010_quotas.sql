-- Limits that keep one tenant, or one stolen key, from abusing the shared
-- service: per-account quotas, the daily send counters they are checked
-- against, and the built-in issuer's key life cycle (publish a key before
-- it signs; retire a withdrawn one).

-- An account's own quotas, set with `touchpoint accounts set-quota`; a
-- NULL column takes the process default (TOUCHPOINT_DAILY_SEND_QUOTA,
-- TOUCHPOINT_RECIPIENT_DAILY_CAP, TOUCHPOINT_CHANNEL_QUOTA,
-- TOUCHPOINT_EVENT_TYPE_QUOTA). 0 means no limit.
CREATE TABLE account_quotas (
    account_id          text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    daily_sends         integer CHECK (daily_sends >= 0),
    recipient_daily_cap integer CHECK (recipient_daily_cap >= 0),
    channels            integer CHECK (channels >= 0),
    event_types         integer CHECK (event_types >= 0),
    updated_at          timestamptz NOT NULL
);

-- Invites and reminders an account sent (or began to send) per UTC day.
CREATE TABLE account_daily_sends (
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    day        date NOT NULL,
    sends      integer NOT NULL,
    PRIMARY KEY (account_id, day)
);

-- Invites an account sent to one address per UTC day, across all of its
-- invite settings. The address is kept only as its SHA-256 (lower-cased
-- email, or E.164 mobile), and rows live two days (housekeeping).
CREATE TABLE recipient_daily_sends (
    account_id   text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    address_hash bytea NOT NULL,
    day          date NOT NULL,
    sends        integer NOT NULL,
    PRIMARY KEY (account_id, address_hash, day)
);
CREATE INDEX recipient_daily_sends_day ON recipient_daily_sends (day);

-- Signing keys: a new key is published before it may sign (active_from;
-- NULL for keys made before this migration: created_at), and an operator
-- can retire one (`touchpoint keys retire`): no longer published or
-- accepted.
ALTER TABLE signing_keys ADD COLUMN active_from timestamptz, ADD COLUMN retired_at timestamptz;
