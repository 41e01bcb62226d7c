-- The dead letters a replay runs again: those no replay resolved (stored
-- or duplicate), by number, a page at a time.
--   $1  BIGINT  the last dead_id of the previous page (0 for the first)
--   $2  BIGINT  the most to return
SELECT dead_id, received_at, origin, stream, stream_seq, subject, file, line, reason_code, reason, raw,
       coalesce(raw_size, octet_length(raw)), coalesce(raw_sha256, sha256(raw))
FROM dead_letters d
WHERE dead_id > $1
  AND NOT EXISTS (SELECT 1 FROM dead_letter_replays r
                  WHERE r.dead_id = d.dead_id AND r.result IN ('stored', 'duplicate'))
ORDER BY dead_id
LIMIT $2;
