-- Each delivery keeps its attempts, newest last: when it ended, the
-- status the receiver answered (none: no answer), the error as Touchpoint
-- words it, and how long it took. The log keeps the last 20; the
-- attempts column still counts every one.
ALTER TABLE webhook_deliveries ADD COLUMN attempt_log jsonb NOT NULL DEFAULT '[]';

-- An installation still moving its data into the monthly partitions has
-- the partitioned table waiting in touchpoint_move: it gets the column
-- too, so that the move finds the two alike.
DO $$
BEGIN
    IF to_regclass('touchpoint_move.webhook_deliveries') IS NOT NULL THEN
        ALTER TABLE touchpoint_move.webhook_deliveries ADD COLUMN attempt_log jsonb NOT NULL DEFAULT '[]';
    END IF;
END
$$;
