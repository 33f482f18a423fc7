-- An event's event type and channel are those of its invite setting: an
-- accept looks the setting up by both, and a setting's event type and
-- channel never change. The setting's own foreign keys (event type and
-- channel, ON DELETE CASCADE) together with events' key to the setting
-- (NO ACTION) therefore keep both as safe as their own keys did: deleting
-- an event type or channel that has events still fails, at the setting.
-- Checked per row, the two keys cost about a tenth of a batch accept's
-- time (docs/performance.md, "Bulk ingest").
ALTER TABLE events
    DROP CONSTRAINT events_event_type_id_fkey,
    DROP CONSTRAINT events_channel_id_fkey;
