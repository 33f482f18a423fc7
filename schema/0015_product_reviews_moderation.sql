-- Reviews the shop can show: ratings of the event's products, the
-- publication status the shop cannot bend, the shop's public reply, the
-- customer's consent to be named, a history of every change, and the
-- aggregates of public ratings kept up to date in the transaction of
-- each change (reading them never scans the reviews).
--
-- "Public" is defined once here, as the generated column "public" of
-- reviews and product_reviews: published, or reported for a reason other
-- than personal_data. Go says the same in review.Public; a store test
-- holds the two together.

-- A review may now carry product ratings only: its shop rating is NULL.
ALTER TABLE reviews ALTER COLUMN rating DROP NOT NULL;

ALTER TABLE reviews
    ADD COLUMN status           text NOT NULL DEFAULT 'published'
                                CHECK (status IN ('published', 'reported', 'removed')),
    -- The shop's report while reported (and only then).
    ADD COLUMN report_reason    text CHECK (report_reason IN ('spam', 'offensive', 'personal_data', 'not_an_experience')),
    ADD COLUMN reported_at      timestamptz,
    -- The operator published it after a report, and the customer has not
    -- changed it since: it cannot be reported again.
    ADD COLUMN settled          boolean NOT NULL DEFAULT false,
    ADD COLUMN public           boolean NOT NULL GENERATED ALWAYS AS
                                (status = 'published' OR (status = 'reported' AND report_reason IS DISTINCT FROM 'personal_data')) STORED,
    -- The customer agreed to be shown as "Greta Z." (the names stay in
    -- the event; review.Author makes the public name from them).
    ADD COLUMN show_name        boolean NOT NULL DEFAULT false,
    ADD COLUMN reply_text       text,
    ADD COLUMN reply_created_at timestamptz,
    ADD COLUMN reply_updated_at timestamptz,
    ADD CONSTRAINT reviews_report CHECK ((status = 'reported') = (report_reason IS NOT NULL AND reported_at IS NOT NULL)),
    ADD CONSTRAINT reviews_reply CHECK ((reply_text IS NULL) = (reply_created_at IS NULL));
CREATE INDEX reviews_by_status ON reviews (account_id, status, created_at DESC, id DESC);
-- The operator's queue (touchpoint reviews reported), oldest report first.
CREATE INDEX reviews_reported ON reviews (reported_at, id) WHERE status = 'reported';

-- One rating of one product of the event, with what the event said of the
-- product at the time. Status and report reason are always those of its
-- review: the customer wrote them together, and they are reported and
-- decided together.
CREATE TABLE product_reviews (
    id            text PRIMARY KEY,                  -- prv-<uuid>
    account_id    text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    review_id     text NOT NULL REFERENCES reviews (id) ON DELETE CASCADE,
    event_id      text NOT NULL,
    product_index smallint NOT NULL CHECK (product_index >= 0), -- its place in the event's products
    name          text,
    sku           text,
    gtin          text,
    mpn           text,
    brand         text,
    url           text,
    image_url     text,
    rating        smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
    comment       text NOT NULL DEFAULT '',
    status        text NOT NULL DEFAULT 'published' CHECK (status IN ('published', 'reported', 'removed')),
    report_reason text CHECK (report_reason IN ('spam', 'offensive', 'personal_data', 'not_an_experience')),
    public        boolean NOT NULL GENERATED ALWAYS AS
                  (status = 'published' OR (status = 'reported' AND report_reason IS DISTINCT FROM 'personal_data')) STORED,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    UNIQUE (review_id, product_index),
    CONSTRAINT product_reviews_report CHECK ((status = 'reported') = (report_reason IS NOT NULL))
);
-- GET /product-reviews, newest first, with each filter.
CREATE INDEX product_reviews_list ON product_reviews (account_id, created_at DESC, id DESC);
CREATE INDEX product_reviews_by_sku ON product_reviews (account_id, sku, created_at DESC, id DESC) WHERE sku IS NOT NULL;
CREATE INDEX product_reviews_by_gtin ON product_reviews (account_id, gtin, created_at DESC, id DESC) WHERE gtin IS NOT NULL;
CREATE INDEX product_reviews_by_mpn ON product_reviews (account_id, mpn, created_at DESC, id DESC) WHERE mpn IS NOT NULL;
CREATE INDEX product_reviews_by_status ON product_reviews (account_id, status, created_at DESC, id DESC);
-- An erasure finds the comments of a customer's events by them.
CREATE INDEX product_reviews_by_event ON product_reviews (event_id);

-- Every change of a review: the customer's (created, updated), the shop's
-- (reported, replied, reply_deleted) and the operator's (published,
-- removed). actor: "customer", "operator" or the API client's id.
CREATE TABLE review_history (
    id         bigserial PRIMARY KEY,
    review_id  text NOT NULL REFERENCES reviews (id) ON DELETE CASCADE,
    account_id text NOT NULL,
    event_id   text NOT NULL,                        -- the review's; an erasure finds the notes by it
    action     text NOT NULL,
    status     text NOT NULL,                        -- the review's status after the change
    reason     text,                                 -- a report's reason
    note       text,                                 -- a report's or a decision's note
    actor      text NOT NULL,
    at         timestamptz NOT NULL
);
CREATE INDEX review_history_of ON review_history (review_id, at DESC, id DESC);
CREATE INDEX review_history_by_event ON review_history (event_id);

-- Public shop ratings of an account: count, sum and distribution.
CREATE TABLE review_aggregates (
    account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    count      bigint NOT NULL DEFAULT 0 CHECK (count >= 0),
    sum        bigint NOT NULL DEFAULT 0 CHECK (sum >= 0),
    r1         bigint NOT NULL DEFAULT 0 CHECK (r1 >= 0),
    r2         bigint NOT NULL DEFAULT 0 CHECK (r2 >= 0),
    r3         bigint NOT NULL DEFAULT 0 CHECK (r3 >= 0),
    r4         bigint NOT NULL DEFAULT 0 CHECK (r4 >= 0),
    r5         bigint NOT NULL DEFAULT 0 CHECK (r5 >= 0)
);

-- Public product ratings of an account by product key: a product review
-- counts once under each of its sku, gtin and mpn that the event gave.
CREATE TABLE product_aggregates (
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key_kind   text NOT NULL CHECK (key_kind IN ('sku', 'gtin', 'mpn')),
    key_value  text NOT NULL,
    count      bigint NOT NULL DEFAULT 0 CHECK (count >= 0),
    sum        bigint NOT NULL DEFAULT 0 CHECK (sum >= 0),
    r1         bigint NOT NULL DEFAULT 0 CHECK (r1 >= 0),
    r2         bigint NOT NULL DEFAULT 0 CHECK (r2 >= 0),
    r3         bigint NOT NULL DEFAULT 0 CHECK (r3 >= 0),
    r4         bigint NOT NULL DEFAULT 0 CHECK (r4 >= 0),
    r5         bigint NOT NULL DEFAULT 0 CHECK (r5 >= 0),
    PRIMARY KEY (account_id, key_kind, key_value)
);

-- The reviews stored so far are all published: count them once.
INSERT INTO review_aggregates (account_id, count, sum, r1, r2, r3, r4, r5)
SELECT account_id, count(*), sum(rating),
       count(*) FILTER (WHERE rating = 1), count(*) FILTER (WHERE rating = 2), count(*) FILTER (WHERE rating = 3),
       count(*) FILTER (WHERE rating = 4), count(*) FILTER (WHERE rating = 5)
FROM reviews WHERE rating IS NOT NULL GROUP BY account_id;

-- Their history begins with them.
INSERT INTO review_history (review_id, account_id, event_id, action, status, actor, at)
SELECT id, account_id, event_id, 'created', 'published', 'customer', created_at FROM reviews;
