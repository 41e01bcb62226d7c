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
-- and $tax_fallback (the type of a description nothing matches). At most
-- 32 types are read.
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
-- One WHEN per taxonomy type, in priority order, up to 32 types (the Go
-- side refuses more): indexing the parameter keeps each pattern a constant,
-- compiled once, where a join against the list would compile it per row.
tt_classified AS (
    SELECT d,
           CASE
             WHEN regexp_matches(d, $tax_patterns[1]) THEN $tax_types[1]
             WHEN regexp_matches(d, $tax_patterns[2]) THEN $tax_types[2]
             WHEN regexp_matches(d, $tax_patterns[3]) THEN $tax_types[3]
             WHEN regexp_matches(d, $tax_patterns[4]) THEN $tax_types[4]
             WHEN regexp_matches(d, $tax_patterns[5]) THEN $tax_types[5]
             WHEN regexp_matches(d, $tax_patterns[6]) THEN $tax_types[6]
             WHEN regexp_matches(d, $tax_patterns[7]) THEN $tax_types[7]
             WHEN regexp_matches(d, $tax_patterns[8]) THEN $tax_types[8]
             WHEN regexp_matches(d, $tax_patterns[9]) THEN $tax_types[9]
             WHEN regexp_matches(d, $tax_patterns[10]) THEN $tax_types[10]
             WHEN regexp_matches(d, $tax_patterns[11]) THEN $tax_types[11]
             WHEN regexp_matches(d, $tax_patterns[12]) THEN $tax_types[12]
             WHEN regexp_matches(d, $tax_patterns[13]) THEN $tax_types[13]
             WHEN regexp_matches(d, $tax_patterns[14]) THEN $tax_types[14]
             WHEN regexp_matches(d, $tax_patterns[15]) THEN $tax_types[15]
             WHEN regexp_matches(d, $tax_patterns[16]) THEN $tax_types[16]
             WHEN regexp_matches(d, $tax_patterns[17]) THEN $tax_types[17]
             WHEN regexp_matches(d, $tax_patterns[18]) THEN $tax_types[18]
             WHEN regexp_matches(d, $tax_patterns[19]) THEN $tax_types[19]
             WHEN regexp_matches(d, $tax_patterns[20]) THEN $tax_types[20]
             WHEN regexp_matches(d, $tax_patterns[21]) THEN $tax_types[21]
             WHEN regexp_matches(d, $tax_patterns[22]) THEN $tax_types[22]
             WHEN regexp_matches(d, $tax_patterns[23]) THEN $tax_types[23]
             WHEN regexp_matches(d, $tax_patterns[24]) THEN $tax_types[24]
             WHEN regexp_matches(d, $tax_patterns[25]) THEN $tax_types[25]
             WHEN regexp_matches(d, $tax_patterns[26]) THEN $tax_types[26]
             WHEN regexp_matches(d, $tax_patterns[27]) THEN $tax_types[27]
             WHEN regexp_matches(d, $tax_patterns[28]) THEN $tax_types[28]
             WHEN regexp_matches(d, $tax_patterns[29]) THEN $tax_types[29]
             WHEN regexp_matches(d, $tax_patterns[30]) THEN $tax_types[30]
             WHEN regexp_matches(d, $tax_patterns[31]) THEN $tax_types[31]
             WHEN regexp_matches(d, $tax_patterns[32]) THEN $tax_types[32]
           END AS type
    FROM tt_descriptions
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
