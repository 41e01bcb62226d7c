SELECT last_seq FROM ingest_position WHERE stream = $1;
