-- Record the replay of dead letters (ingest -replay-dead-letters), in the
-- transaction that stores the events now valid: one row each in
-- dead_letter_replays, with the reason it had before. Then
-- update_replayed.sql sets the new reason of those still dead.
--   $1  TIMESTAMPTZ  replayed_at: the batch's commit time
--   $2  BIGINT[]     dead_id of each dead letter replayed
--   $3  VARCHAR[]    its result: stored | duplicate | still_dead
INSERT INTO dead_letter_replays
SELECT m.dead_id, $1, m.result, d.reason_code, d.reason
FROM (SELECT unnest($2::BIGINT[]) AS dead_id, unnest($3::VARCHAR[]) AS result) m
JOIN dead_letters d ON d.dead_id = m.dead_id;
