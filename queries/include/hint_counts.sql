-- The counts of the hints analysis per group and hint, from the cells of
-- hc_cells (include/hint_cells.sql), each defined here once:
--   calls            tool calls under the hint (of the task they served)
--   failed           of those, not ok
--   followed         calls whose tool is the hint
--   followed_failed  of those, not ok
--   deviated         calls whose tool is another than the hint
--   deviated_failed  of those, not ok
--   planned          plan tasks carrying the hint
--   dropped          pending tasks carrying it that a replan dropped
--   stripped         times it was stripped from a plan
-- (views/task_facts_pending.sql says what each fact is.) Not a statement:
-- a SELECT included by analyze/hints.sql and ingest/rollup_hints.sql where
-- they say "@include include/hint_counts.sql"; the day rollups
-- (hint_days) hold its rows per day.
SELECT agent, agent_version, model, task_type, day, week, ruleset, hint,
       CAST(coalesce(sum(n) FILTER (WHERE fact = 'call'), 0) AS BIGINT)                                AS calls,
       CAST(coalesce(sum(n) FILTER (WHERE fact = 'call' AND NOT ok), 0) AS BIGINT)                     AS failed,
       CAST(coalesce(sum(n) FILTER (WHERE fact = 'call' AND followed), 0) AS BIGINT)                   AS followed,
       CAST(coalesce(sum(n) FILTER (WHERE fact = 'call' AND followed AND NOT ok), 0) AS BIGINT)        AS followed_failed,
       CAST(coalesce(sum(n) FILTER (WHERE fact = 'call' AND NOT followed), 0) AS BIGINT)               AS deviated,
       CAST(coalesce(sum(n) FILTER (WHERE fact = 'call' AND NOT followed AND NOT ok), 0) AS BIGINT)    AS deviated_failed,
       CAST(coalesce(sum(n) FILTER (WHERE fact = 'planned'), 0) AS BIGINT)                             AS planned,
       CAST(coalesce(sum(n) FILTER (WHERE fact = 'dropped'), 0) AS BIGINT)                             AS dropped,
       CAST(coalesce(sum(n) FILTER (WHERE fact = 'stripped'), 0) AS BIGINT)                            AS stripped
FROM hc_cells
GROUP BY agent, agent_version, model, task_type, day, week, ruleset, hint
