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
WITH
-- @include analyze/mappings_task_types.sql
rp_drops AS (
    SELECT agent, session, seq, task_type, hint
    FROM tt_typed
    WHERE fact = 'dropped' AND hint IS NOT NULL
),
rp_adds AS (
    SELECT session, seq, task_id, description, task_type, hint
    FROM tt_typed
    WHERE fact = 'planned' AND hint IS NOT NULL
),
rp_pairs AS (
    SELECT DISTINCT d.agent, d.session, d.seq, d.task_type, d.hint AS from_hint, a.hint AS to_hint,
           a.task_id, a.description
    FROM rp_drops d
    JOIN rp_adds a ON a.session = d.session AND a.seq = d.seq AND a.task_type = d.task_type AND a.hint <> d.hint
),
rp_done AS (
    SELECT session, seq, task_id, description, completion
    FROM tt_joined
    WHERE fact = 'completed' AND description IS NOT NULL
),
rp_outcomes AS (
    SELECT p.agent, p.session, p.seq, p.task_type, p.from_hint, p.to_hint, p.task_id,
           count(dn.completion) > 0                   AS completed,
           bool_or(dn.completion = 'success') IS TRUE AS succeeded
    FROM rp_pairs p
    LEFT JOIN rp_done dn ON dn.session = p.session AND dn.task_id = p.task_id
                        AND dn.description = p.description AND dn.seq > p.seq
    GROUP BY ALL
)
SELECT CASE WHEN list_contains($by, 'agent') THEN agent END AS agent,
       task_type, from_hint, to_hint,
       count(DISTINCT (session, seq))          AS replans,
       count(*)                                AS added,
       count(*) FILTER (WHERE completed)       AS completed,
       count(*) FILTER (WHERE succeeded)       AS succeeded
FROM rp_outcomes
GROUP BY ALL
ORDER BY ALL;
