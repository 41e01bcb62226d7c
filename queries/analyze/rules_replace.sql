-- analyze rules, replace evidence: valid replans that dropped a pending task
-- hinted A and added a new task hinted B (B ≠ A) of the same task type, and
-- how B's tasks ended.
-- Parameters: those of mappings_task_types.sql, and $by (only 'agent' is
-- honoured: rules are learned per task type, over all agents or per agent).
-- One row per (agent,) task type, A, B:
--   replans    distinct replans that show the swap;
--   added      B tasks those replans added;
--   completed  of those, tasks with an agent.task.completed later in the
--              session (the same task id with the same description in the
--              plan version in force at completion: a pending task a later
--              replan re-lists is still the same task);
--   succeeded  of those, tasks completed with completion = 'success'.
-- The counts are defined in include/replace_counts.sql; the days the day
-- rollups serve are read from replace_days, the others computed from the
-- facts (include/rollup_split.sql), and the two give the same counts (a
-- test in internal/store holds them equal).
WITH
-- @include include/rollup_split.sql
-- @include analyze/mappings_task_types.sql
-- @include include/replace_outcomes.sql
rp_counts AS (
-- @include include/replace_counts.sql
)
SELECT CASE WHEN list_contains($by, 'agent') THEN agent END AS agent,
       task_type, from_hint, to_hint,
       CAST(sum(replans) AS BIGINT)   AS replans,
       CAST(sum(added) AS BIGINT)     AS added,
       CAST(sum(completed) AS BIGINT) AS completed,
       CAST(sum(succeeded) AS BIGINT) AS succeeded
FROM (
    SELECT agent, task_type, from_hint, to_hint, replans, added, completed, succeeded FROM rp_counts
    UNION ALL
    SELECT agent, task_type, from_hint, to_hint, replans, added, completed, succeeded
    FROM replace_days
    WHERE
-- @include include/rollup_served.sql
)
GROUP BY ALL
ORDER BY ALL;
