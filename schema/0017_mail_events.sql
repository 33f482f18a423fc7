-- What the mail providers report of a message after their relay took it
-- (POST /mail-events/{provider}; see docs/operations.md).

-- Every report kept, once: (provider, provider_id) names the provider's
-- event, so a report delivered twice is recognised. message says whether
-- it was about the event's invite or its reminder, attempt is the send
-- attempt of that kind it was received after (attemptHistory shows it
-- there). detail is the provider's words with the recipient's address
-- masked.
CREATE TABLE mail_events (
    provider    text NOT NULL,
    provider_id text NOT NULL,
    event_id    text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    account_id  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    message     text NOT NULL CHECK (message IN ('invite', 'reminder')),
    attempt     integer,
    outcome     text NOT NULL CHECK (outcome IN ('delivered', 'bounced', 'complained', 'deferred')),
    detail      text,
    occurred_at timestamptz NOT NULL,
    received_at timestamptz NOT NULL,
    PRIMARY KEY (provider, provider_id)
);
CREATE INDEX mail_events_by_event ON mail_events (event_id, message, attempt);
-- The complaints of the last 24 hours per account (a metric).
CREATE INDEX mail_events_complaints ON mail_events (received_at) WHERE outcome = 'complained';

-- The delivery status of each message, as the API shows it
-- (invite.delivery): a report changes it only when it ranks higher
-- (delivered < bounced < complained), so a late "delivered" never clears
-- a bounce.
CREATE TABLE mail_deliveries (
    event_id   text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    message    text NOT NULL CHECK (message IN ('invite', 'reminder')),
    status     text NOT NULL CHECK (status IN ('delivered', 'bounced', 'complained')),
    provider   text NOT NULL,
    at         timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (event_id, message)
);

-- Values a provider signs once (Mailgun's tokens), kept as long as a
-- signed timestamp is accepted, so a replayed request is refused.
CREATE TABLE mail_event_nonces (
    provider  text NOT NULL,
    nonce     text NOT NULL,
    signed_at timestamptz NOT NULL,
    PRIMARY KEY (provider, nonce)
);
CREATE INDEX mail_event_nonces_signed ON mail_event_nonces (signed_at);

-- The messages sent in the last 24 hours per account (a metric).
CREATE INDEX send_attempts_sent ON send_attempts (finished_at) WHERE outcome = 'sent';
