-- Record an applied migration, in the transaction that applied it.
-- Parameters: $1 version, $2 name, $3 applied_at, $4 checksum.
INSERT INTO schema_migrations (version, name, applied_at, checksum) VALUES ($1, $2, $3, $4);
