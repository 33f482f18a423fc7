-- Addresses a mail server refused for good (a 5xx reply to RCPT TO, or an
-- address no server can take). Later invites of the account to them are
-- skipped as `suppressed` instead of being sent into the same refusal,
-- which would hurt the sender's reputation. Trying the refused invite
-- again lifts its suppression; so does deleting the event (retention):
-- the address is customer data and lives no longer than its event.
CREATE TABLE suppressed_addresses (
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    email      text NOT NULL,        -- lower case
    event_id   text NOT NULL REFERENCES events (id) ON DELETE CASCADE, -- the refused invite
    created_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, email)
);
CREATE INDEX suppressed_addresses_event ON suppressed_addresses (event_id);
