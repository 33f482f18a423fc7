-- The public reviews of an account in one language, newest first: "de"
-- keeps "de" and every "de_…", so the language is the part of the locale
-- before "_". A list filtered by a language then reads only that
-- language's reviews, however few of them there are among the account's
-- others (reviews_public would pass over all the others to find them).
CREATE INDEX reviews_public_language ON reviews (account_id, (split_part(locale, '_', 1)), created_at DESC, id DESC) WHERE public;
