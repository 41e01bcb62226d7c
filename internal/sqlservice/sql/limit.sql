-- The row limit, applied inside DuckDB so that a large result is never
-- computed in full. The service puts a statement that already passed every
-- check of guard.go in place of the query placeholder below, and the row
-- limit plus one (to tell a truncated result from a complete one) in place
-- of the limit placeholder. The wrapped statement is checked again (one
-- SELECT statement); when it does not parse (a trailing ";", a PRAGMA-style
-- SELECT), the query runs as given and the rows are cut off while reading.
SELECT * FROM (
{{query}}
) AS evosignal_limited LIMIT {{limit}}
