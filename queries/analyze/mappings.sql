-- analyze mappings: which tools the tasks of each type use, over the whole
-- selection and in the last $windows windows of $window_us microseconds.
-- Parameters: those of mappings_task_types.sql, $by (task_type is always a
-- grouping dimension; agent, agent_version, model, day, week, ruleset may be
-- added), $window_us (BIGINT) and $windows (INTEGER).
-- Windows end at $until, or, when $until is NULL, just after the start of
-- the latest session selected; window 1 is [end - W, end), window 2 the one
-- before, and so on. A call falls in the window of its session's start.
-- One row per group × tool over real tool calls; counts only (shares,
-- entropy and stability are computed from them in
-- internal/metrics/mappings.go).
WITH
-- @include analyze/mappings_task_types.sql
mp_end AS (
    SELECT coalesce(epoch_us(CAST($until AS TIMESTAMPTZ)), max(epoch_us(started_at)) + 1) AS end_us
    FROM tt_sessions
),
mp_calls AS (
    SELECT
-- @include include/by_dimensions.sql
        -- task_type is always a grouping dimension: mp_type, not the
        -- fragment's task_type (NULL unless $by names it), is the group's.
      , t.task_type AS mp_type,
        tool,
        ok,
        (e.end_us - epoch_us(started_at) + CAST($window_us AS BIGINT) - 1) // CAST($window_us AS BIGINT) AS win
    FROM tt_typed t, mp_end e
    WHERE fact = 'call'
),
mp_windows AS (
    SELECT agent, agent_version, model, mp_type AS task_type, day, week, ruleset, tool, win,
           count(*)                    AS calls,
           count(*) FILTER (WHERE ok)  AS ok
    FROM mp_calls
    GROUP BY ALL
)
SELECT agent, agent_version, model, task_type, day, week, ruleset, tool,
       CAST(sum(calls) AS BIGINT)                                   AS calls,
       CAST(sum(ok) AS BIGINT)                                      AS ok,
       list(win ORDER BY win)   FILTER (WHERE win <= CAST($windows AS BIGINT)) AS windows,
       list(calls ORDER BY win) FILTER (WHERE win <= CAST($windows AS BIGINT)) AS window_calls,
       any_value((SELECT end_us FROM mp_end))                       AS window_end_us
FROM mp_windows
GROUP BY agent, agent_version, model, task_type, day, week, ruleset, tool
ORDER BY agent, agent_version, model, task_type, day, week, ruleset, calls DESC, tool;
