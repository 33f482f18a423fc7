-- Who put an address on the suppression list, and every time it was put
-- there or lifted: support can answer "why does this customer get no
-- invites" and "who lifted their opt-out". `by` is "customer" (the
-- unsubscribe link, an SMS STOP), "provider" (a refusal or a report of the
-- mail or SMS provider), "operator" (the admin CLI) or the API client's id.
ALTER TABLE suppressions ADD COLUMN added_by text NOT NULL DEFAULT 'unknown';
UPDATE suppressions SET added_by = CASE reason
    WHEN 'unsubscribed' THEN 'customer'
    WHEN 'bounced' THEN 'provider'
    WHEN 'complained' THEN 'provider'
    ELSE 'unknown' END;

CREATE TABLE suppression_history (
    id         bigserial PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    address    text NOT NULL,
    action     text NOT NULL CHECK (action IN ('added', 'lifted')),
    reason     text NOT NULL,
    by         text NOT NULL,
    at         timestamptz NOT NULL
);
CREATE INDEX suppression_history_address ON suppression_history (account_id, address, at DESC, id DESC);

INSERT INTO suppression_history (account_id, address, action, reason, by, at)
SELECT account_id, address, 'added', reason, added_by, created_at FROM suppressions ORDER BY created_at;
