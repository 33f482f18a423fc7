-- The console lists an account's reviews by whether the shop has answered
-- them, and its overview counts the low ratings still waiting for an
-- answer. Each index holds one side of the answer, newest first, with the
-- rating after the order (as reviews_public does), so a list or a count
-- of low ratings checks it on the index entries themselves.
CREATE INDEX reviews_unanswered ON reviews (account_id, created_at DESC, id DESC, rating) WHERE reply_text IS NULL;
CREATE INDEX reviews_answered ON reviews (account_id, created_at DESC, id DESC, rating) WHERE reply_text IS NOT NULL;
