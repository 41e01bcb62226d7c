-- analyze export: this export's high-water marks, the latest commit time of
-- each clock, at or before $until. NULL when there is nothing (yet).
--   $until  TIMESTAMPTZ  -until; NULL = no limit
SELECT
    (SELECT max(ingested_at) FROM events
      WHERE $until IS NULL OR ingested_at <= $until)  AS events_mark,
    (SELECT max(received_at) FROM dead_letters
      WHERE $until IS NULL OR received_at <= $until)  AS dead_letters_mark
