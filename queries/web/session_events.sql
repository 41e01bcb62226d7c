-- The raw events of one session (events), as stored, by seq: at most
-- $limit after seq $after_seq (NULL: from the first).
-- Parameters: $session (VARCHAR), $after_seq (BIGINT), $limit (BIGINT).
SELECT seq, time, type, source, id, CAST(data AS VARCHAR) AS data, CAST(ext AS VARCHAR) AS ext, subject, stream_seq, ingested_at
FROM events
WHERE session = $session AND ($after_seq IS NULL OR seq > $after_seq)
ORDER BY seq, id
LIMIT $limit;
