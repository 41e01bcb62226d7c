-- The migrations the database has applied, with the checksum recorded for
-- each (NULL: recorded before checksums were).
SELECT version, name, checksum FROM schema_migrations ORDER BY version;
