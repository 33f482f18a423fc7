-- The public reviews of an account with at least a given rating, newest
-- first (?minRating=): the rating joins the key of reviews_public, after
-- the order, so the filter is checked on the index entries themselves and
-- only the reviews that pass are read from the table. An index led by the
-- rating could not give the list in date order across ratings (4 and 5)
-- without a sort of every match; this one walks the account's newest
-- entries and stops at a full page. The index it replaces served every
-- other use of reviews_public, which this one serves alike.
CREATE INDEX reviews_public_rated ON reviews (account_id, created_at DESC, id DESC, rating) WHERE public;
DROP INDEX reviews_public;
ALTER INDEX reviews_public_rated RENAME TO reviews_public;
