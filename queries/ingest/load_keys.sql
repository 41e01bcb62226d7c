-- The de-duplication keys of every stored event, loaded once at start.
SELECT key_hash FROM events;
