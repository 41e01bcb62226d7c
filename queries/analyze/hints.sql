-- analyze hints: tool-hint outcomes per hint (and per group, e.g. task type ×
-- hint with $by = ['task_type']).
-- Parameters: those of mappings_task_types.sql, and $by (grouping
-- dimensions: agent, agent_version, model, task_type — the resolved type —,
-- day, week, ruleset).
-- One row per group × hint; hint is NULL for calls (and planned tasks)
-- without one. A hint seen only in plans, drops or strips has a row with
-- calls = 0. The other_* columns count the group's calls under every other
-- hint (the NULL hint included): the baseline a hint's failure rate is
-- compared with. Counts only: rates, intervals and tests are computed from
-- them (internal/metrics/hints.go). The counts are defined in
-- include/hint_counts.sql; the days the day rollups serve are read from
-- hint_days, the others computed from the facts (include/rollup_split.sql),
-- and the two give the same counts (a test in internal/store holds them
-- equal).
WITH
-- @include include/rollup_split.sql
-- @include analyze/mappings_task_types.sql
hc_cells AS (
-- @include include/hint_cells.sql
),
hint_counts AS (
    SELECT agent, agent_version, model, task_type, day, week, ruleset, hint,
           CAST(sum(calls) AS BIGINT)           AS calls,
           CAST(sum(failed) AS BIGINT)          AS failed,
           CAST(sum(followed) AS BIGINT)        AS followed,
           CAST(sum(followed_failed) AS BIGINT) AS followed_failed,
           CAST(sum(deviated) AS BIGINT)        AS deviated,
           CAST(sum(deviated_failed) AS BIGINT) AS deviated_failed,
           CAST(sum(planned) AS BIGINT)         AS planned,
           CAST(sum(dropped) AS BIGINT)         AS dropped,
           CAST(sum(stripped) AS BIGINT)        AS stripped
    FROM (
-- @include include/hint_counts.sql
        UNION ALL
        SELECT
-- @include include/by_dimensions.sql
             , hint, calls, failed, followed, followed_failed, deviated, deviated_failed, planned, dropped, stripped
        FROM hint_days
        WHERE
-- @include include/rollup_served.sql
    )
    GROUP BY agent, agent_version, model, task_type, day, week, ruleset, hint
)
SELECT *,
       CAST(sum(calls)  OVER grp - calls  AS BIGINT) AS other_calls,
       CAST(sum(failed) OVER grp - failed AS BIGINT) AS other_failed
FROM hint_counts
WINDOW grp AS (PARTITION BY agent, agent_version, model, task_type, day, week, ruleset)
ORDER BY agent, agent_version, model, task_type, day, week, ruleset, hint NULLS LAST;
