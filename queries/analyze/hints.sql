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
-- them (internal/metrics/hints.go).
WITH
-- @include analyze/mappings_task_types.sql
hint_counts AS (
    SELECT
-- @include include/by_dimensions.sql
      , hint,
        count(*) FILTER (WHERE fact = 'call')                             AS calls,
        count(*) FILTER (WHERE fact = 'call' AND NOT ok)                  AS failed,
        count(*) FILTER (WHERE fact = 'call' AND tool = hint)             AS followed,
        count(*) FILTER (WHERE fact = 'call' AND tool = hint AND NOT ok)  AS followed_failed,
        count(*) FILTER (WHERE fact = 'call' AND tool <> hint)            AS deviated,
        count(*) FILTER (WHERE fact = 'call' AND tool <> hint AND NOT ok) AS deviated_failed,
        count(*) FILTER (WHERE fact = 'planned')                          AS planned,
        count(*) FILTER (WHERE fact = 'dropped')                          AS dropped,
        count(*) FILTER (WHERE fact = 'stripped')                         AS stripped
    FROM tt_typed
    WHERE fact IN ('call', 'planned', 'dropped', 'stripped')
    GROUP BY ALL
)
SELECT *,
       CAST(sum(calls)  OVER grp - calls  AS BIGINT) AS other_calls,
       CAST(sum(failed) OVER grp - failed AS BIGINT) AS other_failed
FROM hint_counts
WINDOW grp AS (PARTITION BY agent, agent_version, model, task_type, day, week, ruleset)
ORDER BY agent, agent_version, model, task_type, day, week, ruleset, hint NULLS LAST;
