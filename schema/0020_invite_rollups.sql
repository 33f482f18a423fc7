-- The funnel (GET /stats/invites, GET /stats/reviews, touchpoint stats):
-- counts per account, event type, channel, language and medium, kept in
-- the transaction of every change of an event, so reading them never
-- scans events. Every count of an event belongs to the time it was
-- accepted; a count is the number of events in that state now (see the
-- stats package).

-- When the customer first opened the invite's feedback page (a review
-- implies it), and when they opted out through this event's invite.
-- locale is the language the event is counted under
-- (touchpoint_language of its defaultLocale); NULL on events accepted
-- before this migration, which read it from the payload.
ALTER TABLE events
    ADD COLUMN opened_at       timestamptz,
    ADD COLUMN unsubscribed_at timestamptz,
    ADD COLUMN locale          text;

-- The language a defaultLocale is counted under: its language when it
-- is one of the six, else en (stats.Language in Go; a test holds them
-- together).
CREATE FUNCTION touchpoint_language(requested text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN l IN ('da', 'de', 'en', 'es', 'fr', 'nl') THEN l ELSE 'en' END
    FROM (SELECT lower(split_part(replace(btrim(COALESCE(requested, ''), ' '), '-', '_'), '_', 1)) AS l) x
$$;

-- Daily counts (the UTC day the events were accepted), and the same per
-- quarter hour for periods in other time zones; a row with empty event
-- type, channel, locale and medium holds the totals of its day or slot.
CREATE TABLE invite_rollups (
    account_id                  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    day                         date NOT NULL,
    event_type_id               text NOT NULL,
    channel_id                  text NOT NULL,
    locale                      text NOT NULL,
    medium                      text NOT NULL,
    accepted                    bigint NOT NULL DEFAULT 0,
    pending                     bigint NOT NULL DEFAULT 0,
    scheduled                   bigint NOT NULL DEFAULT 0,
    sent                        bigint NOT NULL DEFAULT 0,
    failed                      bigint NOT NULL DEFAULT 0,
    cancelled                   bigint NOT NULL DEFAULT 0,
    skipped_event_type_inactive bigint NOT NULL DEFAULT 0,
    skipped_setting_inactive    bigint NOT NULL DEFAULT 0,
    skipped_recently_invited    bigint NOT NULL DEFAULT 0,
    skipped_suppressed          bigint NOT NULL DEFAULT 0,
    skipped_no_address          bigint NOT NULL DEFAULT 0,
    skipped_quota_exceeded      bigint NOT NULL DEFAULT 0,
    skipped_other               bigint NOT NULL DEFAULT 0,
    opened                      bigint NOT NULL DEFAULT 0,
    reviewed                    bigint NOT NULL DEFAULT 0,
    rated_1                     bigint NOT NULL DEFAULT 0,
    rated_2                     bigint NOT NULL DEFAULT 0,
    rated_3                     bigint NOT NULL DEFAULT 0,
    rated_4                     bigint NOT NULL DEFAULT 0,
    rated_5                     bigint NOT NULL DEFAULT 0,
    unsubscribed                bigint NOT NULL DEFAULT 0,
    delivered                   bigint NOT NULL DEFAULT 0,
    bounced                     bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day, event_type_id, channel_id, locale, medium)
);

CREATE TABLE invite_rollup_slots (LIKE invite_rollups INCLUDING DEFAULTS);
ALTER TABLE invite_rollup_slots DROP COLUMN day;
ALTER TABLE invite_rollup_slots ADD COLUMN slot timestamptz NOT NULL;
ALTER TABLE invite_rollup_slots ADD FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE;
ALTER TABLE invite_rollup_slots ADD PRIMARY KEY (account_id, slot, event_type_id, channel_id, locale, medium);
CREATE INDEX invite_rollup_slots_totals ON invite_rollup_slots (account_id, slot) WHERE event_type_id = '';
CREATE INDEX invite_rollups_totals ON invite_rollups (account_id, day) WHERE event_type_id = '';

-- The events a review or an unsubscribe of before now tells of.
UPDATE events e SET opened_at = r.created_at FROM reviews r WHERE r.event_id = e.id AND e.opened_at IS NULL;
UPDATE events e SET unsubscribed_at = s.created_at FROM suppressions s
WHERE s.event_id = e.id AND s.account_id = e.account_id AND s.reason = 'unsubscribed' AND e.unsubscribed_at IS NULL;

-- Counts every event afresh into empty tables: run here for the events
-- accepted before this migration; tests run it again to check the counts
-- kept change by change against the rows.
CREATE FUNCTION touchpoint_rebuild_rollups() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM invite_rollups;
    DELETE FROM invite_rollup_slots;
    WITH facts AS (
        SELECT e.account_id,
               date_bin('15 minutes', e.received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS slot,
               e.event_type_id, e.channel_id,
               COALESCE(e.locale, touchpoint_language(e.payload ->> 'defaultLocale')) AS locale,
               COALESCE(e.invite_medium, '') AS medium,
               e.invite_status AS status, COALESCE(e.invite_reason, '') AS reason,
               e.opened_at IS NOT NULL AS opened, e.unsubscribed_at IS NOT NULL AS unsubscribed,
               r.id IS NOT NULL AS reviewed, COALESCE(r.rating, 0) AS rating, COALESCE(d.status, '') AS delivery
        FROM events e LEFT JOIN reviews r ON r.event_id = e.id
        LEFT JOIN mail_deliveries d ON d.event_id = e.id AND d.message = 'invite'
    ), counts AS (
        SELECT account_id, slot, event_type_id, channel_id, locale, medium,
               count(*) AS accepted,
               count(*) FILTER (WHERE status NOT IN ('scheduled', 'sending', 'sent', 'failed', 'cancelled', 'skipped')) AS pending,
               count(*) FILTER (WHERE status IN ('scheduled', 'sending')) AS scheduled,
               count(*) FILTER (WHERE status = 'sent') AS sent,
               count(*) FILTER (WHERE status = 'failed') AS failed,
               count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
               count(*) FILTER (WHERE status = 'skipped' AND reason = 'event_type_inactive') AS skipped_event_type_inactive,
               count(*) FILTER (WHERE status = 'skipped' AND reason = 'setting_inactive') AS skipped_setting_inactive,
               count(*) FILTER (WHERE status = 'skipped' AND reason = 'recently_invited') AS skipped_recently_invited,
               count(*) FILTER (WHERE status = 'skipped' AND reason = 'suppressed') AS skipped_suppressed,
               count(*) FILTER (WHERE status = 'skipped' AND reason = 'no_address') AS skipped_no_address,
               count(*) FILTER (WHERE status = 'skipped' AND reason = 'quota_exceeded') AS skipped_quota_exceeded,
               count(*) FILTER (WHERE status = 'skipped' AND reason NOT IN ('event_type_inactive', 'setting_inactive',
                   'recently_invited', 'suppressed', 'no_address', 'quota_exceeded')) AS skipped_other,
               count(*) FILTER (WHERE opened) AS opened,
               count(*) FILTER (WHERE reviewed) AS reviewed,
               count(*) FILTER (WHERE reviewed AND rating = 1) AS rated_1,
               count(*) FILTER (WHERE reviewed AND rating = 2) AS rated_2,
               count(*) FILTER (WHERE reviewed AND rating = 3) AS rated_3,
               count(*) FILTER (WHERE reviewed AND rating = 4) AS rated_4,
               count(*) FILTER (WHERE reviewed AND rating = 5) AS rated_5,
               count(*) FILTER (WHERE unsubscribed) AS unsubscribed,
               count(*) FILTER (WHERE delivery IN ('delivered', 'complained')) AS delivered,
               count(*) FILTER (WHERE delivery = 'bounced') AS bounced
        FROM facts GROUP BY account_id, slot, event_type_id, channel_id, locale, medium
    ), daily AS (
        INSERT INTO invite_rollups (account_id, day, event_type_id, channel_id, locale, medium, accepted, pending, scheduled, sent, failed, cancelled, skipped_event_type_inactive, skipped_setting_inactive, skipped_recently_invited, skipped_suppressed, skipped_no_address, skipped_quota_exceeded, skipped_other, opened, reviewed, rated_1, rated_2, rated_3, rated_4, rated_5, unsubscribed, delivered, bounced)
        SELECT account_id, (slot AT TIME ZONE 'UTC')::date, event_type_id, channel_id, locale, medium, sum(accepted), sum(pending), sum(scheduled), sum(sent), sum(failed), sum(cancelled), sum(skipped_event_type_inactive), sum(skipped_setting_inactive), sum(skipped_recently_invited), sum(skipped_suppressed), sum(skipped_no_address), sum(skipped_quota_exceeded), sum(skipped_other), sum(opened), sum(reviewed), sum(rated_1), sum(rated_2), sum(rated_3), sum(rated_4), sum(rated_5), sum(unsubscribed), sum(delivered), sum(bounced)
        FROM counts GROUP BY account_id, (slot AT TIME ZONE 'UTC')::date, event_type_id, channel_id, locale, medium
        UNION ALL
        SELECT account_id, (slot AT TIME ZONE 'UTC')::date, '', '', '', '', sum(accepted), sum(pending), sum(scheduled), sum(sent), sum(failed), sum(cancelled), sum(skipped_event_type_inactive), sum(skipped_setting_inactive), sum(skipped_recently_invited), sum(skipped_suppressed), sum(skipped_no_address), sum(skipped_quota_exceeded), sum(skipped_other), sum(opened), sum(reviewed), sum(rated_1), sum(rated_2), sum(rated_3), sum(rated_4), sum(rated_5), sum(unsubscribed), sum(delivered), sum(bounced)
        FROM counts GROUP BY account_id, (slot AT TIME ZONE 'UTC')::date
    )
    INSERT INTO invite_rollup_slots (account_id, slot, event_type_id, channel_id, locale, medium, accepted, pending, scheduled, sent, failed, cancelled, skipped_event_type_inactive, skipped_setting_inactive, skipped_recently_invited, skipped_suppressed, skipped_no_address, skipped_quota_exceeded, skipped_other, opened, reviewed, rated_1, rated_2, rated_3, rated_4, rated_5, unsubscribed, delivered, bounced)
    SELECT account_id, slot, event_type_id, channel_id, locale, medium, accepted, pending, scheduled, sent, failed, cancelled, skipped_event_type_inactive, skipped_setting_inactive, skipped_recently_invited, skipped_suppressed, skipped_no_address, skipped_quota_exceeded, skipped_other, opened, reviewed, rated_1, rated_2, rated_3, rated_4, rated_5, unsubscribed, delivered, bounced FROM counts
    UNION ALL
    SELECT account_id, slot, '', '', '', '', sum(accepted), sum(pending), sum(scheduled), sum(sent), sum(failed), sum(cancelled), sum(skipped_event_type_inactive), sum(skipped_setting_inactive), sum(skipped_recently_invited), sum(skipped_suppressed), sum(skipped_no_address), sum(skipped_quota_exceeded), sum(skipped_other), sum(opened), sum(reviewed), sum(rated_1), sum(rated_2), sum(rated_3), sum(rated_4), sum(rated_5), sum(unsubscribed), sum(delivered), sum(bounced) FROM counts GROUP BY account_id, slot;
END
$$;

SELECT touchpoint_rebuild_rollups();
