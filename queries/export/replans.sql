-- analyze export: the replans rows of the events committed in ($after, $upto],
-- with their partition day, the UTC date of the event's time.
--   $after  TIMESTAMPTZ  the previous export's mark (exclusive); NULL = from the start
--   $upto   TIMESTAMPTZ  this export's mark (inclusive): max(events.ingested_at)
-- A row belongs to the event (source, event_id) it was derived from.
SELECT t.*, CAST(timezone('UTC', t.time) AS DATE) AS day
FROM replans t
SEMI JOIN events e
    ON  e.source = t.source AND e.id = t.event_id
    AND ($after IS NULL OR e.ingested_at > $after) AND e.ingested_at <= $upto
ORDER BY t.time, t.session, t.seq
