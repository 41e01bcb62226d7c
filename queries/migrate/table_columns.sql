-- The columns of the database's own tables (temporary ones and the
-- migrator's schema_migrations aside), in order: what the migrations built,
-- compared when checksums are backfilled.
SELECT table_name, column_index, column_name, data_type
FROM duckdb_columns()
WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal
  AND table_name <> 'schema_migrations'
  AND table_name IN (SELECT table_name FROM duckdb_tables()
                     WHERE database_name = current_database() AND schema_name = 'main' AND NOT temporary)
ORDER BY table_name, column_index;
