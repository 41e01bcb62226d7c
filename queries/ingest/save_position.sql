-- Record the JetStream sequence reached, in the batch's transaction, with
-- the identity (creation time) of the stream it belongs to.
INSERT INTO ingest_position (stream, last_seq, stream_created, updated_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (stream) DO UPDATE SET last_seq = excluded.last_seq, stream_created = excluded.stream_created,
    updated_at = excluded.updated_at;
