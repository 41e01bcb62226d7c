-- Dead letters received in [$since, $until), by reason: the data-quality
-- section of `analyze report`. A dead letter is timed by received_at (the
-- commit time): its own event time may be unreadable. Not filtered by
-- agent: a dead letter may have no readable source. The dead letters of
-- one batch share their received_at; the latest is then the last in the
-- stream (or file).
-- Parameters: $since, $until (TIMESTAMPTZ).
SELECT
    reason_code,
    count(*)         AS dead_letters,
    max(received_at) AS latest_at,
    arg_max(reason, (received_at, coalesce(stream_seq, 0), coalesce(line, 0))) AS latest_reason
FROM dead_letters
WHERE received_at >= $since AND received_at < $until
GROUP BY reason_code
ORDER BY dead_letters DESC, reason_code
