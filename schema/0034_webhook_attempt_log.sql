-- Each delivery keeps its attempts, newest last: when it was made, the
-- status the receiver answered (null: none), the error as Touchpoint
-- words it, and how long the attempt took. The log keeps the last 20; the
-- attempts column still counts every one.
ALTER TABLE webhook_deliveries ADD COLUMN attempt_log jsonb NOT NULL DEFAULT '[]';
