-- Data-side safety nets: every send attempt kept, the
-- reconciler's restart orders, and the erasure of a customer's data.

-- One row per send attempt of an invite or its reminder, written in the
-- transaction of the claim that marks the send `sending` (started_at) and
-- in the one that records how it ended (finished_at, outcome). n counts
-- the attempts of one kind of one event from 1; an invite's n is its
-- `attempts` count at the claim. Retries add rows: history is never
-- rewritten, except that a delivery recorded after an attempt had been
-- judged `uncertain` turns that attempt `sent`.
--
-- outcome: NULL while the attempt runs, then sent, transient (failed for
-- now; tried again), rejected (refused for good), uncertain (interrupted
-- after it began: may have been delivered) or failed (any other end).
-- detail is the provider's answer as logged: addresses in it are masked;
-- an erasure clears it.
CREATE TABLE send_attempts (
    event_id    text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('invite', 'reminder')),
    n           integer NOT NULL CHECK (n > 0),
    medium      text,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz,
    outcome     text,
    detail      text,
    PRIMARY KEY (event_id, kind, n)
);

-- The reconciler orders a new run of an invite whose workflow is gone or
-- closed: kind 'restart' (a run that keeps the event's schedule, and that
-- may follow a closed run of any kind).
ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_kind_check CHECK (kind IN ('start', 'retry', 'restart'));
-- "Is a start order of this event still open?" for the reconciler; only
-- open rows are indexed, so it stays small.
CREATE INDEX outbox_open_event ON outbox (event_id) WHERE done_at IS NULL;

-- What the reconciler scans: scheduled invites past their send time, and
-- pending or sending invites that have not moved for a while. Both sets
-- are small while the workers keep up.
CREATE INDEX events_overdue ON events (scheduled_for, id) WHERE invite_status = 'scheduled';
CREATE INDEX events_stalled ON events (updated_at, id) WHERE invite_status IN ('pending', 'sending');

-- An erased event keeps its IDs, statuses, products and review but no
-- longer the customer's email, name, address or mobile (POST
-- /customers/erase). customer_email is then '' (it stays NOT NULL).
ALTER TABLE events ADD COLUMN erased_at timestamptz;
-- Erasure by the client's customer reference finds the events by it.
CREATE INDEX events_by_customer_reference ON events (account_id, customer_reference) WHERE customer_reference IS NOT NULL;
