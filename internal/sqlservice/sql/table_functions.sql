-- The names of DuckDB's table functions, and of its pragmas as the table
-- functions pragma_<name> they are also called as. A query may name one
-- without parentheses, as if it were a table (FROM pragma_database_list),
-- and DuckDB then calls it: the guard checks such names as calls (guard.go).
SELECT DISTINCT lower(function_name) FROM duckdb_functions() WHERE function_type = 'table'
UNION
SELECT DISTINCT 'pragma_' || lower(function_name) FROM duckdb_functions() WHERE function_type = 'pragma';
