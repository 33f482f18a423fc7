-- Failed invites are few; this keeps the ops CLI's bulk retry
-- (touchpoint invites retry --failed) from scanning every event.
CREATE INDEX events_failed ON events (id) WHERE invite_status = 'failed';
