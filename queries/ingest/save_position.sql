-- Record the JetStream sequence reached, in the batch's transaction.
INSERT INTO ingest_position (stream, last_seq, updated_at) VALUES ($1, $2, $3)
ON CONFLICT (stream) DO UPDATE SET last_seq = excluded.last_seq, updated_at = excluded.updated_at;
