-- The database-level guard of the query service (docs/query-service.md).
-- Both settings are global: they hold for every connection of the database,
-- the ingester's included, until it is closed.
--   enable_external_access = false: no file outside the database (and its
--     WAL and temp directory) can be read or written, no extension installed
--     or loaded, no database attached.
--   lock_configuration = true: no SET or RESET can change any setting again,
--     including these two.
SET enable_external_access = false;
SET lock_configuration = true;
