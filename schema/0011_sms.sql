-- Invites by SMS.

-- The number an invite or reminder by SMS was sent to, in E.164, written
-- when its send is claimed (the payload keeps the number as the client
-- sent it, national or international). minDaysBetweenInvites counts an
-- account's SMS invites to one number by it, and an inbound STOP finds
-- the accounts that texted a number by it. Customer data: whoever erases
-- a customer's mobile from the payload clears it too.
ALTER TABLE events ADD COLUMN customer_mobile text;
CREATE INDEX events_by_mobile ON events (customer_mobile, account_id) WHERE customer_mobile IS NOT NULL;

-- What the provider's status callback (POST /sms/status) last reported of
-- each message it took: queued, sent, delivered, undelivered, failed, ….
-- message says whether it carried the event's invite or its reminder; a
-- retried invite is a new message, so an event may have several rows per
-- kind, the newest being the one shown.
CREATE TABLE sms_deliveries (
    message_sid text PRIMARY KEY,
    event_id    text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    message     text NOT NULL CHECK (message IN ('invite', 'reminder')),
    status      text NOT NULL,
    error_code  integer,            -- the provider's code for undelivered and failed
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE INDEX sms_deliveries_by_event ON sms_deliveries (event_id, message, created_at DESC);
