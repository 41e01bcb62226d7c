-- The dead letters still dead after a replay take its reason (see
-- mark_replayed.sql).
--   $1  BIGINT[]   dead_id of each dead letter still dead
--   $2  VARCHAR[]  its reason code now
--   $3  VARCHAR[]  its reason now
UPDATE dead_letters d
SET reason_code = m.code, reason = m.reason
FROM (SELECT unnest($1::BIGINT[]) AS dead_id, unnest($2::VARCHAR[]) AS code, unnest($3::VARCHAR[]) AS reason) m
WHERE d.dead_id = m.dead_id;
