-- A person's choice of the console's language: a language of the
-- console's own ("en", "de", …), or '' for the browser's.
ALTER TABLE people ADD COLUMN language text NOT NULL DEFAULT '' CHECK (language ~ '^([a-z]{2})?$');
