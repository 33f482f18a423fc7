-- The suppression list of each account: addresses that get no
-- invite and no reminder, whatever the medium. An address is an email in
-- lower case or a mobile number in E.164. Suppressions are not customer
-- data tied to an event: deleting the event keeps them, and so does
-- retrying an invite; only DELETE /suppressions/{address} lifts one.
CREATE TABLE suppressions (
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    address    text NOT NULL,
    medium     text NOT NULL CHECK (medium IN ('email', 'sms')),
    reason     text NOT NULL CHECK (reason IN ('unsubscribed', 'bounced', 'complained', 'manual')),
    event_id   text,                -- the event it came from, if any (no foreign key: it outlives the event)
    created_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, address)
);
CREATE INDEX suppressions_list ON suppressions (account_id, created_at DESC, address DESC);
CREATE INDEX suppressions_by_reason ON suppressions (account_id, reason, created_at DESC, address DESC);

-- Addresses refused by the mail server become `bounced` suppressions.
INSERT INTO suppressions (account_id, address, medium, reason, event_id, created_at)
SELECT account_id, email, 'email', 'bounced', event_id, created_at FROM suppressed_addresses
ON CONFLICT DO NOTHING;
DROP TABLE suppressed_addresses;
