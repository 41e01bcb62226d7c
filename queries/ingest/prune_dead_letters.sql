-- Deletes the dead letters received before a time (the ingester's
-- -dead-letter-retention); prune_dead_letter_replays.sql deletes their replay
-- records first.
--   $1  TIMESTAMPTZ  dead letters received before this go
DELETE FROM dead_letters WHERE received_at < $1;
