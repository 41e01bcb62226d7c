-- Backfill the checksum of a migration recorded without one.
-- Parameters: $1 checksum, $2 version.
UPDATE schema_migrations SET checksum = $1 WHERE version = $2 AND checksum IS NULL;
