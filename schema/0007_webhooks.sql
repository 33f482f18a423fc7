-- Outbound webhooks: the endpoints a shop registers, and one
-- delivery row per (state change, subscribed endpoint), written in the
-- same transaction as the change (a transactional outbox) and delivered
-- by a Temporal workflow per row.

-- An endpoint's signing secret must be usable to sign, so it cannot be
-- kept as a hash: it is stored sealed (AES-256-GCM under a key derived
-- from TOUCHPOINT_SECRET_KEY, the endpoint id as additional data). During
-- a rotation the previous secret signs too, until previous_expires_at.
CREATE TABLE webhook_endpoints (
    id                  text PRIMARY KEY,             -- whk-<uuid>
    account_id          text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    url                 text NOT NULL,
    events              text[] NOT NULL,              -- event types subscribed to, e.g. {invite.sent}
    description         text NOT NULL DEFAULT '',
    enabled             boolean NOT NULL DEFAULT true,
    secret              bytea NOT NULL,               -- sealed
    previous_secret     bytea,                        -- sealed; signs until previous_expires_at
    previous_expires_at timestamptz,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_list ON webhook_endpoints (account_id, created_at DESC, id DESC);

-- One message to one endpoint. payload is the exact body sent on every
-- attempt (json, not jsonb: jsonb would reorder the members and the
-- signature covers the bytes). No foreign key to events: a delivery
-- outlives an event deleted by retention; an endpoint's deliveries go
-- with it.
--
-- status: pending until an attempt is answered 2xx (succeeded), or the
-- delivery is given up (failed: retries exhausted, 410 Gone, endpoint
-- disabled). started_at is set once the starter has started its workflow
-- (ID = the delivery id); until then next_start_at says when to try.
CREATE TABLE webhook_deliveries (
    id               text PRIMARY KEY,                -- msg-<uuid>, the webhook-id header
    endpoint_id      text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    account_id       text NOT NULL,
    type             text NOT NULL,
    payload          json NOT NULL,
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    last_status_code integer,
    last_error       text,
    created_at       timestamptz NOT NULL,
    delivered_at     timestamptz,
    started_at       timestamptz,
    next_start_at    timestamptz NOT NULL,
    start_attempts   integer NOT NULL DEFAULT 0,
    start_error      text
);
-- GET /webhooks/{id}/deliveries, newest first, optionally by status.
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
-- The starter's queue: deliveries whose workflow is not started yet.
CREATE INDEX webhook_deliveries_to_start ON webhook_deliveries (next_start_at, id) WHERE started_at IS NULL;
-- The backlog gauges, and failing the pending deliveries of an endpoint
-- that is disabled.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (created_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_pending_by_endpoint ON webhook_deliveries (endpoint_id) WHERE status = 'pending';
