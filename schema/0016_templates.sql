-- A shop's own templates: per account, and beside that per event type,
-- for each kind of message and language. One row is the template in
-- force; every version ever stored stays in message_template_versions,
-- so the version an attempt names can always be read back.
CREATE TABLE message_templates (
    id            text PRIMARY KEY,            -- tpl-<uuid>
    account_id    text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    event_type_id text REFERENCES event_types (id) ON DELETE CASCADE, -- NULL: the account's template
    kind          text NOT NULL CHECK (kind IN ('invite', 'reminder', 'sms_invite', 'sms_reminder')),
    locale        text NOT NULL CHECK (locale IN ('da', 'de', 'en', 'es', 'fr', 'nl')),
    version       integer NOT NULL CHECK (version > 0),
    content       jsonb NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX message_templates_account ON message_templates (account_id, kind, locale) WHERE event_type_id IS NULL;
CREATE UNIQUE INDEX message_templates_event_type ON message_templates (event_type_id, kind, locale) WHERE event_type_id IS NOT NULL;
CREATE INDEX message_templates_list ON message_templates (account_id, created_at DESC, id DESC);

-- scope is the event type's id, or '' for the account's template. A
-- version is never changed; deleted_at marks the one a DELETE retired.
-- Versions count on across a DELETE, so a number is never reused.
CREATE TABLE message_template_versions (
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    scope      text NOT NULL,
    kind       text NOT NULL,
    locale     text NOT NULL,
    version    integer NOT NULL,
    content    jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    created_by text NOT NULL,                  -- the API client
    deleted_at timestamptz,
    PRIMARY KEY (account_id, scope, kind, locale, version)
);

-- Test sends of a template to the shop's own address or number. The
-- address is kept only until the test has been sent or has failed. A row
-- is also the order to start its workflow (started_at NULL), which the
-- test send starter in `touchpoint worker` carries out.
CREATE TABLE template_test_sends (
    id               text PRIMARY KEY,         -- tts-<uuid>; also the workflow ID
    account_id       text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    event_type_id    text REFERENCES event_types (id) ON DELETE CASCADE,
    kind             text NOT NULL,
    locale           text NOT NULL,
    address          text,
    masked_address   text NOT NULL,
    status           text NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
    template_source  text,
    template_version integer,
    error            text,
    created_by       text NOT NULL,
    created_at       timestamptz NOT NULL,
    finished_at      timestamptz,
    started_at       timestamptz,
    next_start_at    timestamptz NOT NULL,
    start_attempts   integer NOT NULL DEFAULT 0,
    start_error      text
);
CREATE INDEX template_test_sends_day ON template_test_sends (account_id, created_at);
CREATE INDEX template_test_sends_to_start ON template_test_sends (next_start_at) WHERE started_at IS NULL;

-- Each send attempt names the template it was rendered from.
ALTER TABLE send_attempts ADD COLUMN template_source text, ADD COLUMN template_version integer;
