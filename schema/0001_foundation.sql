-- Accounts (tenants), API clients and the built-in issuer's signing keys.

CREATE TABLE accounts (
    id         text PRIMARY KEY,            -- acc-<uuid>
    name       text NOT NULL,
    created_at timestamptz NOT NULL
);

-- An API client is either one of the built-in issuer's (issuer = '', id is
-- the client_id, secret_hash set) or an external issuer's client linked to
-- an account (issuer and client_id as they appear in its tokens).
CREATE TABLE api_clients (
    id           text PRIMARY KEY,          -- cli-<uuid>
    account_id   text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name         text NOT NULL DEFAULT '',
    access_group text NOT NULL CHECK (access_group IN ('full', 'events', 'readonly')),
    issuer       text NOT NULL DEFAULT '',
    client_id    text NOT NULL,
    secret_hash  bytea,
    -- Tokens issued before not_before are revoked.
    not_before   timestamptz NOT NULL DEFAULT 'epoch',
    created_at   timestamptz NOT NULL,
    UNIQUE (issuer, client_id)
);
CREATE INDEX api_clients_account ON api_clients (account_id, created_at DESC, id DESC);

-- Signing keys of the built-in issuer; private keys are sealed with a key
-- derived from TOUCHPOINT_SECRET_KEY.
CREATE TABLE signing_keys (
    kid          text PRIMARY KEY,
    algorithm    text NOT NULL,
    private_key  bytea NOT NULL,
    public_jwk   jsonb NOT NULL,
    created_at   timestamptz NOT NULL
);

-- Last use of each access token, for the sliding idle lifetime shared by
-- every API replica.
CREATE TABLE token_uses (
    jti          text PRIMARY KEY,
    last_used_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
);
CREATE INDEX token_uses_expires ON token_uses (expires_at);

-- Touchpoint resources. Every row carries its account; lists are keyset
-- paginated newest first on (created_at, id).

CREATE TABLE event_types (
    id         text PRIMARY KEY,            -- ety-<uuid>
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name       text NOT NULL,
    active     boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (account_id, name)
);
CREATE INDEX event_types_list ON event_types (account_id, created_at DESC, id DESC);

CREATE TABLE channels (
    id         text PRIMARY KEY,            -- chl-<uuid>
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name       text NOT NULL,
    type       text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (account_id, name)
);
CREATE INDEX channels_list ON channels (account_id, created_at DESC, id DESC);

CREATE TABLE invite_settings (
    id                       text PRIMARY KEY,  -- ist-<uuid>
    account_id               text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    channel_id               text NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    event_type_id            text NOT NULL REFERENCES event_types (id) ON DELETE CASCADE,
    active                   boolean NOT NULL DEFAULT true,
    medium                   text NOT NULL DEFAULT 'email' CHECK (medium IN ('email', 'sms')),
    delay                    text NOT NULL,     -- ISO 8601 duration, as sent
    delay_from               text NOT NULL DEFAULT 'event' CHECK (delay_from IN ('event', 'transaction', 'delivery')),
    send_window              jsonb,             -- {"start","end","timeZone"} or NULL
    min_days_between_invites integer NOT NULL DEFAULT 30 CHECK (min_days_between_invites BETWEEN 0 AND 365),
    created_at               timestamptz NOT NULL,
    updated_at               timestamptz NOT NULL,
    UNIQUE (channel_id, event_type_id)
);
CREATE INDEX invite_settings_list ON invite_settings (account_id, created_at DESC, id DESC);
CREATE INDEX invite_settings_event_type ON invite_settings (event_type_id);
