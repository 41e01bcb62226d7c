-- The de-duplication keys of every stored event: loaded at open, and again
-- whenever the in-memory set is full and is rebuilt larger.
SELECT key_hash FROM events;
