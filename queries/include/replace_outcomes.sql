-- The replace evidence of analyze/rules_replace.sql, one row per task a
-- valid replan added in place of a dropped one (rp_outcomes): the
-- replan's session, day, agent and model, the task type, the hint dropped
-- (from_hint) and the one added (to_hint, another, on a task of the same
-- type), and whether the added task was completed later in the session and
-- succeeded (rules_replace.sql's header says how). Not a statement: CTEs
-- included after analyze/mappings_task_types.sql by
-- analyze/rules_replace.sql and ingest/rollup_replace.sql where they say
-- "@include include/replace_outcomes.sql", over its tt_typed and
-- tt_joined.
rp_drops AS (
    SELECT day, agent, model, session, seq, task_type, hint
    FROM tt_typed
    WHERE fact = 'dropped' AND hint IS NOT NULL
),
rp_adds AS (
    SELECT session, seq, task_id, description, task_type, hint
    FROM tt_typed
    WHERE fact = 'planned' AND hint IS NOT NULL
),
rp_pairs AS (
    SELECT DISTINCT d.day, d.agent, d.model, d.session, d.seq, d.task_type, d.hint AS from_hint, a.hint AS to_hint,
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
    SELECT p.day, p.agent, p.model, p.session, p.seq, p.task_type, p.from_hint, p.to_hint, p.task_id,
           count(dn.completion) > 0                   AS completed,
           bool_or(dn.completion = 'success') IS TRUE AS succeeded
    FROM rp_pairs p
    LEFT JOIN rp_done dn ON dn.session = p.session AND dn.task_id = p.task_id
                        AND dn.description = p.description AND dn.seq > p.seq
    GROUP BY ALL
),
