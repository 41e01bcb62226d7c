-- The migrator's own table: one row per applied migration (migrations/),
-- with the sha256 of the text it applied. The migrator creates it, and adds
-- columns to it (add_checksum.sql), before it reads anything else: the
-- migrations describe evosignal's schema, this table only which of them ran.
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL,
    checksum   VARCHAR -- hex sha256 of the migration's text; NULL only before the first open that recorded it
);
