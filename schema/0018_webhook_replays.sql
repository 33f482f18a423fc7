-- Replays of failed webhook deliveries. A replay puts a failed delivery
-- back in the outbox (pending, not started) and counts it here: the
-- starter names each replay's workflow after the delivery and this count
-- (msg-….replay-1, …), so a replay runs once however often the starter
-- tries, while the delivery keeps its ID, which is its webhook-id, and
-- its body: receivers deduplicate a replayed message like a retried one.
ALTER TABLE webhook_deliveries ADD COLUMN replays integer NOT NULL DEFAULT 0;
