-- analyze export: the events committed in ($after, $upto], with their
-- partition day, the UTC date of the event's time.
--   $after  TIMESTAMPTZ  the previous export's mark (exclusive); NULL = from the start
--   $upto   TIMESTAMPTZ  this export's mark (inclusive): max(events.ingested_at)
SELECT e.*, CAST(timezone('UTC', e.time) AS DATE) AS day
FROM events e
WHERE ($after IS NULL OR e.ingested_at > $after) AND e.ingested_at <= $upto
ORDER BY e.time, e.session, e.seq
