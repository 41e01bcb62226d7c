-- The sessions an analysis of sessions selects: the rows of session_signals
-- (views/session_signals.sql defines the signals) that pass
-- include/session_filter.sql and, unless $task_type is NULL, have that
-- task_type. day and week are computed here from started_at (its UTC date,
-- and the Monday of its week), as these analyses always have: the stored
-- day and week of session_facts are the same dates unless started_at was
-- edited in place. Not a statement: analyze/replans.sql, trend.sql,
-- effect.sql and replans_comparison.sql include it as the body of a CTE or
-- subquery where they say "@include include/selected_sessions.sql"; it
-- ends with its WHERE clause, so a line after it may add conditions with
-- AND.
-- Parameters: those of session_filter.sql, and $task_type (VARCHAR; NULL =
-- all).
SELECT * REPLACE (CAST(timezone('UTC', started_at) AS DATE)                     AS day,
                  CAST(date_trunc('week', timezone('UTC', started_at)) AS DATE) AS week)
FROM session_signals
WHERE
-- @include include/session_filter.sql
  AND ($task_type IS NULL OR task_type = $task_type)
