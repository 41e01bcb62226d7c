-- The largest dead letter number, read at start: the writer numbers new
-- dead letters after it.
SELECT coalesce(max(dead_id), 0) FROM dead_letters;
