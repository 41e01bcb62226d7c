INSERT INTO ingest_batches (committed_at, origin, stream, first_seq, last_seq, messages, accepted, duplicates, dead_letters)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);
