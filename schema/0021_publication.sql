-- What the public endpoints need: each account's publication keys (the
-- keys that sign the proofs of its reviews), a version of each account's
-- public reviews (the strong ETag of its feed, which is streamed and so
-- cannot be hashed before it is sent), and indexes that read the public
-- reviews newest first without passing over hidden ones.

-- An account's publication keys, newest first. The newest signs; every
-- key ever made stays listed in the account's JWKS, so a proof signed
-- before a rotation still verifies. The private key is sealed like the
-- issuer's signing keys (AES-256-GCM under a key derived from
-- TOUCHPOINT_SECRET_KEY, the kid as additional data).
CREATE TABLE publication_keys (
    kid         text PRIMARY KEY,
    account_id  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    algorithm   text NOT NULL,
    private_key bytea NOT NULL,
    public_jwk  jsonb NOT NULL,
    created_at  timestamptz NOT NULL
);
CREATE INDEX publication_keys_of ON publication_keys (account_id, created_at DESC, kid DESC);

-- A number that changes whenever anything an account shows in public may
-- have changed: its reviews and product reviews (rating, comment, status,
-- reply, consent), its branding, its keys, and the customer names an
-- erasure removes from its events. Kept by triggers, so no path that
-- changes those rows can forget it; it is only ever compared for
-- equality.
-- No foreign key: the rows of a deleted account's reviews are deleted
-- after the account, and their triggers must not fail; a version left
-- behind is harmless.
CREATE TABLE publication_versions (
    account_id text PRIMARY KEY,
    version    bigint NOT NULL DEFAULT 0
);

CREATE FUNCTION publication_bump(acc text) RETURNS void LANGUAGE sql AS $$
    INSERT INTO publication_versions AS v (account_id, version) VALUES (acc, 1)
    ON CONFLICT (account_id) DO UPDATE SET version = v.version + 1;
$$;

-- Rows with an account_id: reviews, product_reviews, publication_keys.
CREATE FUNCTION publication_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM publication_bump(OLD.account_id);
    ELSE
        PERFORM publication_bump(NEW.account_id);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION publication_touch_account() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM publication_bump(NEW.id);
    RETURN NULL;
END $$;

-- An event's payload changes only when its customer is erased; it
-- matters only when the event has a review.
CREATE FUNCTION publication_touch_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM reviews WHERE event_id = NEW.id) THEN
        PERFORM publication_bump(NEW.account_id);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER reviews_publication AFTER INSERT OR UPDATE OR DELETE ON reviews
    FOR EACH ROW EXECUTE FUNCTION publication_touch();
CREATE TRIGGER product_reviews_publication AFTER INSERT OR UPDATE OR DELETE ON product_reviews
    FOR EACH ROW EXECUTE FUNCTION publication_touch();
CREATE TRIGGER publication_keys_publication AFTER INSERT OR UPDATE OR DELETE ON publication_keys
    FOR EACH ROW EXECUTE FUNCTION publication_touch();
CREATE TRIGGER accounts_publication AFTER UPDATE ON accounts
    FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION publication_touch_account();
CREATE TRIGGER events_publication AFTER UPDATE OF payload ON events
    FOR EACH ROW WHEN (OLD.payload IS DISTINCT FROM NEW.payload) EXECUTE FUNCTION publication_touch_event();

-- The public reviews of an account, newest first.
CREATE INDEX reviews_public ON reviews (account_id, created_at DESC, id DESC) WHERE public;
-- The public product reviews of an account (the feed), and by each key.
CREATE INDEX product_reviews_public ON product_reviews (account_id, created_at DESC, id DESC) WHERE public;
CREATE INDEX product_reviews_public_sku ON product_reviews (account_id, sku, created_at DESC, id DESC) WHERE public AND sku IS NOT NULL;
CREATE INDEX product_reviews_public_gtin ON product_reviews (account_id, gtin, created_at DESC, id DESC) WHERE public AND gtin IS NOT NULL;
CREATE INDEX product_reviews_public_mpn ON product_reviews (account_id, mpn, created_at DESC, id DESC) WHERE public AND mpn IS NOT NULL;
