-- The reconciler's scan of reminders (store/reconcile.go), beside the
-- invites' of 0009: reminders of sent invites scheduled past their time,
-- and reminders left sending, each read in keyset order.
CREATE INDEX events_reminder_overdue ON events (reminder_scheduled_for, id) WHERE reminder_status = 'scheduled';
CREATE INDEX events_reminder_stalled ON events (updated_at, id) WHERE reminder_status = 'sending';
