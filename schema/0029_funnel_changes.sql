-- The funnel's counts without a row that every change of an account
-- waits on. Until now each change upserted the account's totals rows of
-- its day and quarter hour, so one account's changes committed one after
-- another. Now each change appends what it changes to the counts here
-- (plain inserts, which never wait on each other), a compactor in the API
-- folds these rows into invite_rollups and invite_rollup_slots within
-- seconds (deleting them in the same transaction), and every reader adds
-- the rows not folded yet: one statement sees either a change here or its
-- fold there, never both and never neither.
CREATE TABLE invite_rollup_changes (LIKE invite_rollup_slots INCLUDING DEFAULTS);
ALTER TABLE invite_rollup_changes ADD FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE;
CREATE INDEX invite_rollup_changes_account ON invite_rollup_changes (account_id, slot);

-- The rebuild counts every event afresh, so the changes not folded yet
-- go with the tables it refills.
ALTER FUNCTION touchpoint_rebuild_rollups() RENAME TO touchpoint_rebuild_rollup_tables;
CREATE FUNCTION touchpoint_rebuild_rollups() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM invite_rollup_changes;
    PERFORM touchpoint_rebuild_rollup_tables();
END
$$;
