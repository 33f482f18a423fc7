-- Why a webhook delivery failed, as a code the shop's systems can branch
-- on (last_error keeps the words): retries_exhausted, gone (the endpoint
-- answered 410 to this delivery) or endpoint_disabled (the endpoint was
-- disabled while the delivery waited, or already when the change it
-- reports happened: such a delivery is written failed, never started,
-- and a replay after the endpoint is enabled sends it). NULL unless the
-- delivery failed.
ALTER TABLE webhook_deliveries ADD COLUMN reason text
    CHECK (reason IN ('retries_exhausted', 'gone', 'endpoint_disabled'));
UPDATE webhook_deliveries SET reason = CASE
        WHEN last_error LIKE 'endpoint disabled%' THEN 'endpoint_disabled'
        WHEN last_status_code = 410 THEN 'gone'
        ELSE 'retries_exhausted' END
    WHERE status = 'failed';
