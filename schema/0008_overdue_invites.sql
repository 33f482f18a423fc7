-- Scheduled invites by send time, for the workers' touchpoint_invites_overdue
-- gauge (invites still scheduled well past their send time): a small partial
-- index, since an invite leaves it once it is sent, skipped or cancelled.
CREATE INDEX events_scheduled_due ON events (scheduled_for) WHERE invite_status = 'scheduled';
