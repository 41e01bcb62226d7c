-- Databases created before checksums were recorded have schema_migrations
-- without the column; their rows get it on the first open (backfill).
ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum VARCHAR;
