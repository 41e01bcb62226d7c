SELECT last_seq, stream_created FROM ingest_position WHERE stream = $1;
