-- The event a webhook delivery speaks of (data.eventId of its payload), so
-- that erasing a customer finds the deliveries that carry their reference
-- or review, pending or delivered, without reading every payload of the
-- account. NULL for a message about no event (a suppression added by
-- hand). Written by the INSERT that emits the delivery.
ALTER TABLE webhook_deliveries ADD COLUMN event_id text;
UPDATE webhook_deliveries SET event_id = payload -> 'data' ->> 'eventId';
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id) WHERE event_id IS NOT NULL;
