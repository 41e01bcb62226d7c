-- analyze export: the dead letters received in ($after, $upto], with their
-- partition day, the UTC date of received_at (their commit time).
--   $after  TIMESTAMPTZ  the previous export's mark (exclusive); NULL = from the start
--   $upto   TIMESTAMPTZ  this export's mark (inclusive): max(dead_letters.received_at)
SELECT d.*, CAST(timezone('UTC', d.received_at) AS DATE) AS day
FROM dead_letters d
WHERE ($after IS NULL OR d.received_at > $after) AND d.received_at <= $upto
ORDER BY d.received_at, d.file, d.line, d.stream_seq
