-- Closing the loop: the shop's branding, the
-- customers' reviews and the invite's reminder.

-- Branding: what the customer sees of the shop. NULL display_name means
-- the account's name.
ALTER TABLE accounts
    ADD COLUMN display_name text,
    ADD COLUMN logo_url     text,
    ADD COLUMN brand_color  text,
    ADD COLUMN reply_to     text;

-- One review per event; posting again replaces rating and comment. No
-- customer data: the event holds it. event_id has no foreign key on
-- purpose: a shop's reviews outlive events deleted by retention.
CREATE TABLE reviews (
    id            text PRIMARY KEY,          -- rev-<uuid>
    account_id    text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    event_id      text NOT NULL UNIQUE,
    event_type_id text NOT NULL,
    channel_id    text NOT NULL,
    rating        smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
    comment       text NOT NULL DEFAULT '',
    locale        text NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX reviews_list ON reviews (account_id, created_at DESC, id DESC);
CREATE INDEX reviews_by_event_type ON reviews (account_id, event_type_id, created_at DESC, id DESC);
CREATE INDEX reviews_by_channel ON reviews (account_id, channel_id, created_at DESC, id DESC);
CREATE INDEX reviews_by_rating ON reviews (account_id, rating, created_at DESC, id DESC);

-- The reminder of an invite setting: NULL, or its delay (ISO 8601, as sent).
ALTER TABLE invite_settings ADD COLUMN reminder_delay text;

-- The reminder of an event's invite. status: NULL (none planned),
-- scheduled, sending (the record-before mark), sent, skipped, cancelled.
ALTER TABLE events
    ADD COLUMN reminder_status        text,
    ADD COLUMN reminder_reason        text,
    ADD COLUMN reminder_scheduled_for timestamptz,
    ADD COLUMN reminder_sent_at       timestamptz;
