-- Housekeeping drops webhook deliveries that ended more than 30 days ago
-- (status <> 'pending' AND created_at < …); without an index of its own
-- that DELETE reads the whole table on every round.
CREATE INDEX webhook_deliveries_ended ON webhook_deliveries (created_at) WHERE status <> 'pending';
