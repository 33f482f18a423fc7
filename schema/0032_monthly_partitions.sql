-- The tables that grow with traffic are partitioned by month (PostgreSQL's
-- declarative RANGE partitioning), so retention drops a whole month
-- instead of deleting rows one by one, and no index grows without bound:
--
--   events               by received_at
--   send_attempts        by the event's received_at (event_received_at)
--   mail_events          by the event's received_at
--   mail_deliveries      by the event's received_at
--   sms_deliveries       by the event's received_at
--   outbox               by created_at
--   webhook_deliveries   by created_at
--   token_uses           by expires_at
--   invite_rollup_slots  by slot
--
-- A month's partition of a table is named <table>_YYYY_MM and holds
-- [YYYY-MM-01, next month) in UTC. There is no default partition: it would
-- forbid DETACH ... CONCURRENTLY and make every new month scan it.
--
-- A unique key of a partitioned table must contain its partition key, so
-- every primary key below ends with it. What stays unique across the
-- whole table, and why (see docs/architecture.md, "Monthly partitions"):
--   - an event's id: new ids are UUIDv7 carrying the event's received_at
--     (to the millisecond), so two rows with one id fall in one month,
--     where (id, received_at) is unique;
--   - the rows kept by an event's id (attempts, provider reports) carry the
--     event's received_at, so one (event, …) key is in one month too;
--   - a provider's report id (mail_events, sms_deliveries) belongs to one
--     event, hence to one month;
--   - an outbox row's id comes from its sequence; a webhook delivery's id
--     is a UUIDv7 of its created_at; a token's jti has one expiry;
--   - Idempotency-Keys live in idempotency_keys, which is not partitioned
--     (its rows expire within days).
--
-- Nothing refers to a partitioned table by a foreign key: a key into it
-- would have to name its partition key, and would make detaching a month
-- check every referencing row. An event's rows are dropped with its
-- month instead, in the same round (store/partitiondb).
--
-- A fresh installation gets the partitioned tables here. An installation
-- with data gets them in the schema touchpoint_move, empty, beside the
-- tables it serves from; `touchpoint migrate --partition` copies the rows
-- over in batches and swaps each table in a short transaction
-- (store/partitiondb). The rows that carry their event's received_at get
-- the column in the old tables too, so the code writes one shape of row
-- before and after the swap.

-- touchpoint_ensure_partitions makes the monthly partitions of every
-- partitioned table (in public and touchpoint_move) for the months from
-- since's to until's, each as a table of its own attached to its parent:
-- ATTACH PARTITION takes a SHARE UPDATE EXCLUSIVE lock on the parent, which
-- reads and writes do not wait for, where CREATE TABLE ... PARTITION OF
-- takes an ACCESS EXCLUSIVE one. It returns how many it made.
CREATE FUNCTION touchpoint_ensure_partitions(since timestamptz, until timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    parent record;
    month timestamp; -- UTC
    part text;
    made integer := 0;
BEGIN
    -- One maker at a time (housekeeping of several replicas, migrate).
    PERFORM pg_advisory_xact_lock(500086170480); -- "toucp" in ASCII
    FOR parent IN
        SELECT n.nspname AS nsp, c.relname AS rel
        FROM pg_partitioned_table p
        JOIN pg_class c ON c.oid = p.partrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname IN ('public', 'touchpoint_move') AND p.partstrat = 'r' AND NOT c.relispartition
        ORDER BY 1, 2
    LOOP
        month := date_trunc('month', since AT TIME ZONE 'UTC');
        WHILE month <= until AT TIME ZONE 'UTC' LOOP
            part := parent.rel || '_' || to_char(month, 'YYYY_MM');
            IF to_regclass(format('%I.%I', parent.nsp, part)) IS NULL THEN
                EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                    parent.nsp, part, parent.nsp, parent.rel);
                EXECUTE format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
                    parent.nsp, parent.rel, parent.nsp, part,
                    month AT TIME ZONE 'UTC', (month + interval '1 month') AT TIME ZONE 'UTC');
                made := made + 1;
            END IF;
            month := month + interval '1 month';
        END LOOP;
    END LOOP;
    RETURN made;
END
$$;

-- touchpoint_uuid7 is a UUIDv7 of t's millisecond, the rest random: the
-- ids of rows partitioned on t (pg.NewTimeID makes the same in Go).
CREATE FUNCTION touchpoint_uuid7(t timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
    SELECT (lpad(to_hex(floor(extract(epoch FROM t) * 1000)::bigint), 12, '0') || '7' || substr(h, 14))::uuid
    FROM (SELECT encode(uuid_send(gen_random_uuid()), 'hex') AS h) r
$$;

-- A review keeps what its public page and its proof show of its event,
-- so that they stay the same once the event's month is dropped: the
-- transaction date, when the invite was sent, and (with the customer's
-- consent to be named) the names the public author is made from.
ALTER TABLE reviews
    ADD COLUMN transaction_date timestamptz,
    ADD COLUMN invited_at timestamptz,
    ADD COLUMN author_first_name text,
    ADD COLUMN author_last_name text;
UPDATE reviews r SET transaction_date = e.transaction_date, invited_at = e.sent_at,
    author_first_name = CASE WHEN r.show_name THEN e.payload #>> '{customer,firstName}' END,
    author_last_name = CASE WHEN r.show_name THEN e.payload #>> '{customer,lastName}' END
FROM events e WHERE e.id = r.event_id;

-- An invite sent after its review was written (the link works before)
-- tells the review when.
CREATE FUNCTION touchpoint_review_invited() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE reviews SET invited_at = NEW.sent_at WHERE event_id = NEW.id AND invited_at IS NULL;
    RETURN NULL;
END
$$;

-- Where the partitioned tables go: in place of empty ones, or beside
-- tables that hold rows.
DO $$
DECLARE
    fresh boolean;
BEGIN
    fresh := NOT EXISTS (SELECT 1 FROM events) AND NOT EXISTS (SELECT 1 FROM outbox)
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries) AND NOT EXISTS (SELECT 1 FROM token_uses)
        AND NOT EXISTS (SELECT 1 FROM invite_rollup_slots);
    IF fresh THEN
        -- Checked again under the lock: a process may be writing already.
        LOCK TABLE events, send_attempts, mail_events, mail_deliveries, sms_deliveries, outbox,
            webhook_deliveries, token_uses, invite_rollup_slots IN ACCESS EXCLUSIVE MODE;
        fresh := NOT EXISTS (SELECT 1 FROM events) AND NOT EXISTS (SELECT 1 FROM outbox)
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries) AND NOT EXISTS (SELECT 1 FROM token_uses)
            AND NOT EXISTS (SELECT 1 FROM invite_rollup_slots);
    END IF;
    IF fresh THEN
        -- CASCADE drops idempotency_keys' foreign key to events.
        DROP TABLE events, send_attempts, mail_events, mail_deliveries, sms_deliveries, outbox,
            webhook_deliveries, token_uses, invite_rollup_slots CASCADE;
        PERFORM set_config('search_path', 'public', true);
    ELSE
        ALTER TABLE send_attempts ADD COLUMN event_received_at timestamptz;
        ALTER TABLE mail_events ADD COLUMN event_received_at timestamptz;
        ALTER TABLE mail_deliveries ADD COLUMN event_received_at timestamptz;
        ALTER TABLE sms_deliveries ADD COLUMN event_received_at timestamptz;
        CREATE SCHEMA touchpoint_move;
        PERFORM set_config('search_path', 'touchpoint_move, public', true);
    END IF;
END
$$;

-- The partitioned tables, in the first schema of the search path set
-- above. Columns, checks and indexes are those of the tables before.
CREATE TABLE events (
    id text NOT NULL,
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    event_type_id text NOT NULL,
    channel_id text NOT NULL,
    received_at timestamptz NOT NULL,
    type text NOT NULL,
    customer_email text NOT NULL,
    customer_reference text,
    transaction_reference text NOT NULL,
    transaction_date timestamptz NOT NULL,
    estimated_delivery_date date,
    payload jsonb NOT NULL,
    invite_setting_id text NOT NULL REFERENCES invite_settings (id),
    delay text NOT NULL,
    delay_from text NOT NULL,
    send_window jsonb,
    invite_status text NOT NULL DEFAULT 'pending',
    invite_reason text,
    invite_medium text,
    scheduled_for timestamptz,
    sent_at timestamptz,
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    updated_at timestamptz NOT NULL,
    reminder_status text,
    reminder_reason text,
    reminder_scheduled_for timestamptz,
    reminder_sent_at timestamptz,
    erased_at timestamptz,
    customer_mobile text,
    opened_at timestamptz,
    unsubscribed_at timestamptz,
    locale text,
    CONSTRAINT events_pkey PRIMARY KEY (id, received_at)
) PARTITION BY RANGE (received_at);
CREATE INDEX events_by_channel ON events (account_id, channel_id, received_at DESC, id DESC);
CREATE INDEX events_by_customer_reference ON events (account_id, customer_reference) WHERE customer_reference IS NOT NULL;
CREATE INDEX events_by_email ON events (account_id, lower(customer_email), received_at DESC, id DESC);
CREATE INDEX events_by_mobile ON events (customer_mobile, account_id) WHERE customer_mobile IS NOT NULL;
CREATE INDEX events_by_status ON events (account_id, invite_status, received_at DESC, id DESC);
CREATE INDEX events_by_transaction ON events (account_id, transaction_reference, received_at DESC, id DESC);
CREATE INDEX events_by_type ON events (account_id, type, received_at DESC, id DESC);
CREATE INDEX events_failed ON events (id) WHERE invite_status = 'failed';
CREATE INDEX events_list ON events (account_id, received_at DESC, id DESC);
CREATE INDEX events_overdue ON events (scheduled_for, id) WHERE invite_status = 'scheduled';
CREATE INDEX events_reminder_overdue ON events (reminder_scheduled_for, id) WHERE reminder_status = 'scheduled';
CREATE INDEX events_reminder_stalled ON events (updated_at, id) WHERE reminder_status = 'sending';
CREATE INDEX events_scheduled_due ON events (scheduled_for) WHERE invite_status = 'scheduled';
CREATE INDEX events_sent_to ON events (account_id, lower(customer_email), sent_at) WHERE invite_status = 'sent';
CREATE INDEX events_stalled ON events (updated_at, id) WHERE invite_status IN ('pending', 'sending');
CREATE TRIGGER events_publication AFTER UPDATE OF payload ON events
    FOR EACH ROW WHEN (OLD.payload IS DISTINCT FROM NEW.payload) EXECUTE FUNCTION publication_touch_event();
CREATE TRIGGER events_invited AFTER UPDATE OF sent_at ON events
    FOR EACH ROW WHEN (OLD.sent_at IS NULL AND NEW.sent_at IS NOT NULL) EXECUTE FUNCTION touchpoint_review_invited();

CREATE TABLE send_attempts (
    event_id text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('invite', 'reminder')),
    n integer NOT NULL CHECK (n > 0),
    medium text,
    started_at timestamptz NOT NULL,
    finished_at timestamptz,
    outcome text,
    detail text,
    template_source text,
    template_version integer,
    event_received_at timestamptz NOT NULL,
    CONSTRAINT send_attempts_pkey PRIMARY KEY (event_id, kind, n, event_received_at)
) PARTITION BY RANGE (event_received_at);
CREATE INDEX send_attempts_sent ON send_attempts (finished_at) WHERE outcome = 'sent';

CREATE TABLE mail_events (
    provider text NOT NULL,
    provider_id text NOT NULL,
    event_id text NOT NULL,
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    message text NOT NULL CHECK (message IN ('invite', 'reminder')),
    attempt integer,
    outcome text NOT NULL CHECK (outcome IN ('delivered', 'bounced', 'complained', 'deferred')),
    detail text,
    occurred_at timestamptz NOT NULL,
    received_at timestamptz NOT NULL,
    event_received_at timestamptz NOT NULL,
    CONSTRAINT mail_events_pkey PRIMARY KEY (provider, provider_id, event_received_at)
) PARTITION BY RANGE (event_received_at);
CREATE INDEX mail_events_by_event ON mail_events (event_id, message, attempt);
CREATE INDEX mail_events_complaints ON mail_events (received_at) WHERE outcome = 'complained';

CREATE TABLE mail_deliveries (
    event_id text NOT NULL,
    message text NOT NULL CHECK (message IN ('invite', 'reminder')),
    status text NOT NULL CHECK (status IN ('delivered', 'bounced', 'complained')),
    provider text NOT NULL,
    at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    event_received_at timestamptz NOT NULL,
    CONSTRAINT mail_deliveries_pkey PRIMARY KEY (event_id, message, event_received_at)
) PARTITION BY RANGE (event_received_at);

CREATE TABLE sms_deliveries (
    message_sid text NOT NULL,
    event_id text NOT NULL,
    message text NOT NULL CHECK (message IN ('invite', 'reminder')),
    status text NOT NULL,
    error_code integer,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    event_received_at timestamptz NOT NULL,
    CONSTRAINT sms_deliveries_pkey PRIMARY KEY (message_sid, event_received_at)
) PARTITION BY RANGE (event_received_at);
CREATE INDEX sms_deliveries_by_event ON sms_deliveries (event_id, message, created_at DESC);

CREATE TABLE outbox (
    id bigserial NOT NULL,
    event_id text NOT NULL,
    kind text NOT NULL DEFAULT 'start' CHECK (kind IN ('start', 'retry', 'restart')),
    created_at timestamptz NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    last_error text,
    done_at timestamptz,
    CONSTRAINT outbox_pkey PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX outbox_done ON outbox (done_at) WHERE done_at IS NOT NULL;
CREATE INDEX outbox_open_event ON outbox (event_id) WHERE done_at IS NULL;
CREATE INDEX outbox_pending ON outbox (next_attempt_at, id) WHERE done_at IS NULL;

CREATE TABLE webhook_deliveries (
    id text NOT NULL,
    endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    account_id text NOT NULL,
    type text NOT NULL,
    payload json NOT NULL,
    status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    last_status_code integer,
    last_error text,
    created_at timestamptz NOT NULL,
    delivered_at timestamptz,
    started_at timestamptz,
    next_start_at timestamptz NOT NULL,
    start_attempts integer NOT NULL DEFAULT 0,
    start_error text,
    event_id text,
    replays integer NOT NULL DEFAULT 0,
    reason text CHECK (reason IN ('retries_exhausted', 'gone', 'endpoint_disabled')),
    CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id) WHERE event_id IS NOT NULL;
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (created_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_pending_by_endpoint ON webhook_deliveries (endpoint_id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_to_start ON webhook_deliveries (next_start_at, id) WHERE started_at IS NULL;

CREATE TABLE token_uses (
    jti text NOT NULL,
    last_used_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT token_uses_pkey PRIMARY KEY (jti, expires_at)
) PARTITION BY RANGE (expires_at);

CREATE TABLE invite_rollup_slots (
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    event_type_id text NOT NULL,
    channel_id text NOT NULL,
    locale text NOT NULL,
    medium text NOT NULL,
    accepted bigint NOT NULL DEFAULT 0,
    pending bigint NOT NULL DEFAULT 0,
    scheduled bigint NOT NULL DEFAULT 0,
    sent bigint NOT NULL DEFAULT 0,
    failed bigint NOT NULL DEFAULT 0,
    cancelled bigint NOT NULL DEFAULT 0,
    skipped_event_type_inactive bigint NOT NULL DEFAULT 0,
    skipped_setting_inactive bigint NOT NULL DEFAULT 0,
    skipped_recently_invited bigint NOT NULL DEFAULT 0,
    skipped_suppressed bigint NOT NULL DEFAULT 0,
    skipped_no_address bigint NOT NULL DEFAULT 0,
    skipped_quota_exceeded bigint NOT NULL DEFAULT 0,
    skipped_other bigint NOT NULL DEFAULT 0,
    opened bigint NOT NULL DEFAULT 0,
    reviewed bigint NOT NULL DEFAULT 0,
    rated_1 bigint NOT NULL DEFAULT 0,
    rated_2 bigint NOT NULL DEFAULT 0,
    rated_3 bigint NOT NULL DEFAULT 0,
    rated_4 bigint NOT NULL DEFAULT 0,
    rated_5 bigint NOT NULL DEFAULT 0,
    unsubscribed bigint NOT NULL DEFAULT 0,
    delivered bigint NOT NULL DEFAULT 0,
    bounced bigint NOT NULL DEFAULT 0,
    slot timestamptz NOT NULL,
    CONSTRAINT invite_rollup_slots_pkey PRIMARY KEY (account_id, slot, event_type_id, channel_id, locale, medium)
) PARTITION BY RANGE (slot);
CREATE INDEX invite_rollup_slots_totals ON invite_rollup_slots (account_id, slot) WHERE event_type_id = '';

-- This month and the three after it; housekeeping keeps three ahead.
SELECT touchpoint_ensure_partitions(now(), now() + interval '3 months');

RESET search_path;
