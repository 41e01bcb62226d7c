-- The facts the hints analysis counts, in cells: per group ($by, as
-- include/by_dimensions.sql), hint, fact, ok and whether the call followed
-- its hint (tool = hint; NULL without a hint or a tool), how many. Counting
-- cells first and summing them after (include/hint_counts.sql) is one
-- small aggregate instead of nine filtered ones over every fact. Not a
-- statement: the body of a CTE hc_cells, included by analyze/hints.sql
-- and ingest/rollup_hints.sql where they say "@include
-- include/hint_cells.sql", over the rows of tt_typed
-- (analyze/mappings_task_types.sql).
-- Parameters: $by (VARCHAR[]).
SELECT
-- @include include/by_dimensions.sql
  , hint, fact, ok, tool = hint AS followed, count(*) AS n
FROM tt_typed
WHERE fact IN ('call', 'planned', 'dropped', 'stripped')
GROUP BY ALL
