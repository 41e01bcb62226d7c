-- Deletes the dead letters received before a time (the ingester's
-- -dead-letter-retention), with their replay records.
--   $1  TIMESTAMPTZ  dead letters received before this go
DELETE FROM dead_letter_replays
WHERE dead_id IN (SELECT dead_id FROM dead_letters WHERE received_at < $1);
