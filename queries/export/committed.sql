-- analyze export: how many events and dead letters the database holds in the
-- windows a previous export covered, (floor, mark]. The export compares them
-- with the rows it wrote: more means rows were committed with a commit time
-- at or before the mark after that export (a clock set back), which an
-- incremental export cannot see.
--   $floor         TIMESTAMPTZ  the export's -since floor; NULL = none
--   $events_mark   TIMESTAMPTZ  the events mark of the previous export (NULL: count nothing)
--   $dead_mark     TIMESTAMPTZ  the dead_letters mark of the previous export (NULL: count nothing)
SELECT
    (SELECT count(*) FROM events
      WHERE ($floor IS NULL OR ingested_at > $floor) AND ingested_at <= $events_mark)     AS events,
    (SELECT count(*) FROM dead_letters
      WHERE ($floor IS NULL OR received_at > $floor) AND received_at <= $dead_mark)       AS dead_letters
