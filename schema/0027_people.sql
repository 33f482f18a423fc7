-- The people who sign in to the console, how they sign in, and the trail
-- of who did what.
--
-- A person belongs to one account and has one role there. No password is
-- stored: a person signs in with a one-time link mailed by the built-in
-- issuer, or through an external OpenID Connect provider whose
-- (issuer, subject) is linked to them.
CREATE TABLE people (
    id          text PRIMARY KEY,                 -- usr-<uuid>
    account_id  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- lower case; '' once the person is erased (the row stays, so the
    -- trail's usr-… still names someone)
    email       text NOT NULL,
    role        text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    disabled_at timestamptz,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE UNIQUE INDEX people_email ON people (email) WHERE email <> '';
CREATE INDEX people_account ON people (account_id, created_at DESC, id DESC);

-- An external provider's account of a person: linked by
-- `touchpoint users link`, or on a first sign-in matched by a verified
-- email claim.
CREATE TABLE person_identities (
    issuer     text NOT NULL,
    subject    text NOT NULL,
    person_id  text NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX person_identities_person ON person_identities (person_id);

-- A one-time sign-in link sent by mail. Only hashes of the link's token
-- and of the browser's binding cookie are kept. The authorization request
-- that asked for it rides along, to be answered once the link is used.
CREATE TABLE sign_in_links (
    id             text PRIMARY KEY,              -- lnk-<uuid>: the mail's Message-ID
    token_hash     bytea NOT NULL UNIQUE,
    browser_hash   bytea NOT NULL,
    person_id      text NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    client_id      text NOT NULL,
    redirect_uri   text NOT NULL,
    state          text NOT NULL,
    nonce          text NOT NULL,
    code_challenge text NOT NULL,
    created_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz
);
CREATE INDEX sign_in_links_person ON sign_in_links (person_id, created_at);
CREATE INDEX sign_in_links_created ON sign_in_links (created_at);

-- An authorization code of the code flow, kept as its hash, used once.
CREATE TABLE authorization_codes (
    code_hash      bytea PRIMARY KEY,
    person_id      text NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    client_id      text NOT NULL,
    redirect_uri   text NOT NULL,
    nonce          text NOT NULL,
    code_challenge text NOT NULL,
    auth_time      timestamptz NOT NULL,
    created_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz
);
CREATE INDEX authorization_codes_expires ON authorization_codes (expires_at);

-- A signed-in browser of the console. The cookie holds a random token;
-- only its hash is kept. Idle and absolute lifetimes are checked on every
-- request; disabling a person or signing them out deletes the rows.
CREATE TABLE console_sessions (
    token_hash   bytea PRIMARY KEY,
    id           text NOT NULL UNIQUE,            -- ses-<uuid>
    person_id    text NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    csrf_token   text NOT NULL,
    issuer       text NOT NULL,                   -- who vouched for the person
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
);
CREATE INDEX console_sessions_person ON console_sessions (person_id);
CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at);

-- Who did what: one row per change, in the account it changed. actor is
-- usr-… (a person), cli-… (an API client) or operator (the admin CLI);
-- target is the id of what changed. No row holds a customer's data, nor a
-- person's email: the trail shows a person's address from people, so
-- erasing a person clears it from the trail too.
CREATE TABLE audit_trail (
    id         text PRIMARY KEY,                  -- aud-<uuid>
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    actor      text NOT NULL,
    action     text NOT NULL,
    target     text NOT NULL DEFAULT '',
    detail     jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL
);
CREATE INDEX audit_trail_account ON audit_trail (account_id, created_at DESC, id DESC);
CREATE INDEX audit_trail_actor ON audit_trail (account_id, actor, created_at DESC, id DESC);
