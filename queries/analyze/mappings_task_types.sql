-- Task types: every fact the hints, mappings and rules analyses count, with
-- the task type it belongs to. Not a statement of its own: hints.sql,
-- mappings.sql and rules_replace.sql include it in their WITH list, in
-- place of their line "@include mappings_task_types.sql" (after the comment
-- marker). It is the one definition of a task's type; the file keeps to the
-- mappings prefix because it is the task → type mapping. To run one of
-- those queries by hand, paste this file there.
--
-- Parameters: $since, $until, $agent, $model (sessions, by their start),
-- $task_type (the resolved type below; NULL = all), and the taxonomy:
-- $tax_types and $tax_patterns (parallel lists, one RE2 pattern per type,
-- matched against lower(description); the first match in list order wins)
-- and $tax_fallback (the type of a description nothing matches).
--
-- A task's type is, in order: the task's own task_type, the session's
-- task_type, the taxonomy's classification of its description, the
-- fallback. type_source says which one it was.
--
-- Facts (column fact):
--   call      a real tool call (control calls excluded), attached to the
--             task with its task_id in the plan version in force at the call
--             (tool_call_tasks);
--   planned   a task entering a plan: every task of a created plan and the
--             new tasks of a valid replan (plan_tasks.is_new), except the
--             pending tasks a replan re-lists: is_new is true for those too,
--             because kept lists only completed tasks. A new task is a
--             re-listing when the version before had a pending task with the
--             same description and hint that the replan did not keep (as
--             many re-listings per description and hint as such tasks);
--   dropped   a pending task a valid replan dropped;
--   stripped  a hint removed as unavailable (hallucinated), with the task of
--             the plan version it was removed from.
tt_sessions AS (
    SELECT session, agent, agent_version, model, task_type AS session_type, ruleset, day, week, started_at
    FROM session_facts
    WHERE ($since IS NULL OR started_at >= $since)
      AND ($until IS NULL OR started_at < $until)
      AND ($agent IS NULL OR agent = $agent)
      AND ($model IS NULL OR model = $model)
),
tt_taxonomy AS (
    SELECT unnest($tax_types::VARCHAR[])          AS type,
           unnest($tax_patterns::VARCHAR[])       AS pattern,
           generate_subscripts($tax_types::VARCHAR[], 1) AS priority
),
tt_new_tasks AS (
    SELECT t.*, prev.seq AS prev_seq,
           row_number() OVER (PARTITION BY t.session, t.plan_seq, t.description, t.tool_hint ORDER BY t.position) AS dup
    FROM plan_tasks t
    ASOF LEFT JOIN plans prev ON prev.session = t.session AND t.plan_seq > prev.seq
    WHERE t.is_new
),
tt_pending_before AS (
    SELECT n.session, n.plan_seq, p.description, p.tool_hint, count(*) AS pending
    FROM (SELECT DISTINCT session, plan_seq, prev_seq FROM tt_new_tasks WHERE prev_seq IS NOT NULL) n
    JOIN plan_tasks p ON p.session = n.session AND p.plan_seq = n.prev_seq AND NOT p.completed
    LEFT JOIN replans r ON r.session = n.session AND r.seq = n.plan_seq
    WHERE NOT list_contains(coalesce(r.kept, []::BIGINT[]), p.task_id)
    GROUP BY ALL
),
tt_facts AS (
    SELECT 'call' AS fact, c.session, c.seq, c.plan_seq, c.task_id, c.hint, c.tool, c.ok,
           c.task_description AS description, c.task_own_type AS own_type
    FROM tool_call_tasks c
    WHERE NOT c.control
    UNION ALL
    SELECT 'planned', t.session, t.plan_seq, t.plan_seq, t.task_id, t.tool_hint, NULL, NULL,
           t.description, t.task_type
    FROM tt_new_tasks t
    LEFT JOIN tt_pending_before b
           ON b.session = t.session AND b.plan_seq = t.plan_seq
          AND b.description = t.description AND b.tool_hint IS NOT DISTINCT FROM t.tool_hint
    WHERE t.dup > coalesce(b.pending, 0)
    UNION ALL
    SELECT 'dropped', d.session, d.replan_seq, d.replan_seq, d.task_id, d.tool_hint, NULL, NULL,
           d.description, d.task_type
    FROM replan_dropped d
    JOIN replans r ON r.session = d.session AND r.seq = d.replan_seq
    WHERE r.valid
    UNION ALL
    SELECT 'stripped', h.session, h.seq, pv.seq, h.task_id, h.tool_hint, NULL, NULL,
           t.description, t.task_type
    FROM hints_stripped h
    ASOF LEFT JOIN plans pv ON h.session = pv.session AND h.seq > pv.seq
    LEFT JOIN plan_tasks t ON t.session = h.session AND t.plan_seq = pv.seq AND t.task_id = h.task_id
    WHERE h.reason = 'unavailable'
),
tt_joined AS (
    SELECT f.*, s.* EXCLUDE (session),
           nullif(trim(f.own_type), '')     AS own,
           nullif(trim(s.session_type), '') AS sess
    FROM tt_facts f
    JOIN tt_sessions s USING (session)
),
-- Classify each distinct description once, and only where no type is given.
tt_descriptions AS (
    SELECT DISTINCT lower(description) AS d
    FROM tt_joined
    WHERE own IS NULL AND sess IS NULL AND description IS NOT NULL
),
tt_classified AS (
    SELECT d.d, arg_min(x.type, x.priority) AS type
    FROM tt_descriptions d
    JOIN tt_taxonomy x ON regexp_matches(d.d, x.pattern)
    GROUP BY d.d
),
tt_typed AS (
    SELECT j.* EXCLUDE (own, sess, own_type, session_type),
           coalesce(j.own, j.sess, c.type, $tax_fallback) AS task_type,
           CASE WHEN j.own IS NOT NULL THEN 'task'
                WHEN j.sess IS NOT NULL THEN 'session'
                WHEN c.type IS NOT NULL THEN 'taxonomy'
                ELSE 'fallback' END                       AS type_source
    FROM tt_joined j
    LEFT JOIN tt_classified c
           ON j.own IS NULL AND j.sess IS NULL AND c.d = lower(j.description)
    WHERE $task_type IS NULL OR coalesce(j.own, j.sess, c.type, $tax_fallback) = $task_type
),
