-- Events, their invite state, the outbox of workflow starts and the
-- idempotency keys of POST /events.

CREATE TABLE events (
    id                      text PRIMARY KEY,       -- evt-<uuid>; also the workflow ID
    account_id              text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    event_type_id           text NOT NULL REFERENCES event_types (id),
    channel_id              text NOT NULL REFERENCES channels (id),
    received_at             timestamptz NOT NULL,
    -- Searchable copies of request fields; the whole request is in payload.
    type                    text NOT NULL,
    customer_email          text NOT NULL,
    customer_reference      text,
    transaction_reference   text NOT NULL,
    transaction_date        timestamptz NOT NULL,
    estimated_delivery_date date,
    payload                 jsonb NOT NULL,         -- the event as sent, normalised
    -- The schedule copied from the invite setting in the accept transaction
    --: the workflow schedules from this copy however late it starts.
    invite_setting_id       text NOT NULL REFERENCES invite_settings (id),
    delay                   text NOT NULL,
    delay_from              text NOT NULL,
    send_window             jsonb,
    -- Invite state. status: pending, scheduled, sending, sent, skipped,
    -- failed, cancelled ("sending" is the record-before mark of a send).
    invite_status           text NOT NULL DEFAULT 'pending',
    invite_reason           text,
    invite_medium           text,
    scheduled_for           timestamptz,
    sent_at                 timestamptz,
    attempts                integer NOT NULL DEFAULT 0,
    last_error              text,
    updated_at              timestamptz NOT NULL
);
-- GET /events: newest first, by account, with each filter.
CREATE INDEX events_list ON events (account_id, received_at DESC, id DESC);
CREATE INDEX events_by_type ON events (account_id, type, received_at DESC, id DESC);
CREATE INDEX events_by_channel ON events (account_id, channel_id, received_at DESC, id DESC);
CREATE INDEX events_by_status ON events (account_id, invite_status, received_at DESC, id DESC);
CREATE INDEX events_by_email ON events (account_id, lower(customer_email), received_at DESC, id DESC);
CREATE INDEX events_by_transaction ON events (account_id, transaction_reference, received_at DESC, id DESC);
-- minDaysBetweenInvites: sent invites of an account to one address.
CREATE INDEX events_sent_to ON events (account_id, lower(customer_email), sent_at) WHERE invite_status = 'sent';

-- Orders to start (or restart, for a retry) an event's workflow, written in
-- the transaction that accepts the event and taken by the starter.
CREATE TABLE outbox (
    id              bigserial PRIMARY KEY,
    event_id        text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    kind            text NOT NULL DEFAULT 'start' CHECK (kind IN ('start', 'retry')),
    created_at      timestamptz NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    last_error      text,
    done_at         timestamptz
);
CREATE INDEX outbox_pending ON outbox (next_attempt_at, id) WHERE done_at IS NULL;
CREATE INDEX outbox_done ON outbox (done_at) WHERE done_at IS NOT NULL;

-- Idempotency-Key of POST /events: only 202 answers are stored.
CREATE TABLE idempotency_keys (
    account_id   text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key          text NOT NULL,
    request_hash bytea NOT NULL,
    event_id     text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
