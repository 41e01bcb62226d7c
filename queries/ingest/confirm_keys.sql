-- Which of these (hash-colliding) keys are really stored: the exact check
-- behind the in-memory hash set.
SELECT key_hash, source, id FROM events WHERE list_contains($1::UBIGINT[], key_hash);
