-- Not a statement: the CTEs and the SELECT of task_facts for the sessions
-- of facts_pending, included right after a WITH (and, in the refresh, after
-- CTEs named like the typed tables that hold only the rows the refresh
-- needs: ingest/refresh_facts.sql). views/task_facts_pending.sql is the
-- view of every pending session; ingest/refresh_facts.sql stores the same
-- rows, so the stored facts and the view cannot differ.
scope AS (
    SELECT DISTINCT session FROM facts_pending
), pl AS (
    SELECT session, seq FROM plans WHERE session IN (SELECT session FROM scope)
), pt AS (
    SELECT * FROM plan_tasks WHERE session IN (SELECT session FROM scope)
), rp AS (
    SELECT session, seq, valid, kept FROM replans WHERE session IN (SELECT session FROM scope)
), new_tasks AS (
    SELECT t.*, prev.seq AS prev_seq,
           row_number() OVER (PARTITION BY t.session, t.plan_seq, t.description, t.tool_hint ORDER BY t.position) AS dup
    FROM pt t
    ASOF LEFT JOIN pl prev ON prev.session = t.session AND t.plan_seq > prev.seq
    WHERE t.is_new
), pending_before AS (
    SELECT n.session, n.plan_seq, p.description, p.tool_hint, count(*) AS pending
    FROM (SELECT DISTINCT session, plan_seq, prev_seq FROM new_tasks WHERE prev_seq IS NOT NULL) n
    JOIN pt p ON p.session = n.session AND p.plan_seq = n.prev_seq AND NOT p.completed
    LEFT JOIN rp r ON r.session = n.session AND r.seq = n.plan_seq
    WHERE NOT list_contains(coalesce(r.kept, []::BIGINT[]), p.task_id)
    GROUP BY ALL
), calls AS (
    SELECT * FROM tool_calls WHERE session IN (SELECT session FROM scope) AND NOT control
), stripped AS (
    SELECT * FROM hints_stripped WHERE session IN (SELECT session FROM scope) AND reason = 'unavailable'
), completions AS (
    SELECT * FROM task_completions WHERE session IN (SELECT session FROM scope)
), facts AS (
    SELECT 'call' AS fact, c.session, c.seq, pv.seq AS plan_seq, c.task_id, c.hint, c.tool, c.ok,
           CAST(NULL AS VARCHAR) AS completion, t.description, t.task_type AS own_type
    FROM calls c
    ASOF LEFT JOIN pl pv ON c.session = pv.session AND c.seq > pv.seq
    LEFT JOIN pt t ON t.session = c.session AND t.plan_seq = pv.seq AND t.task_id = c.task_id
    UNION ALL
    SELECT 'planned', t.session, t.plan_seq, t.plan_seq, t.task_id, t.tool_hint, NULL, NULL,
           NULL, t.description, t.task_type
    FROM new_tasks t
    LEFT JOIN pending_before b
           ON b.session = t.session AND b.plan_seq = t.plan_seq
          AND b.description = t.description AND b.tool_hint IS NOT DISTINCT FROM t.tool_hint
    WHERE t.dup > coalesce(b.pending, 0)
    UNION ALL
    SELECT 'dropped', d.session, d.replan_seq, d.replan_seq, d.task_id, d.tool_hint, NULL, NULL,
           NULL, d.description, d.task_type
    FROM replan_dropped d
    JOIN rp r ON r.session = d.session AND r.seq = d.replan_seq
    WHERE r.valid AND d.session IN (SELECT session FROM scope)
    UNION ALL
    SELECT 'stripped', h.session, h.seq, pv.seq, h.task_id, h.tool_hint, NULL, NULL,
           NULL, t.description, t.task_type
    FROM stripped h
    ASOF LEFT JOIN pl pv ON h.session = pv.session AND h.seq > pv.seq
    LEFT JOIN pt t ON t.session = h.session AND t.plan_seq = pv.seq AND t.task_id = h.task_id
    UNION ALL
    SELECT 'completed', c.session, c.seq, pv.seq, c.task_id, t.tool_hint, NULL, NULL,
           c.completion, t.description, t.task_type
    FROM completions c
    ASOF LEFT JOIN pl pv ON c.session = pv.session AND c.seq > pv.seq
    LEFT JOIN pt t ON t.session = c.session AND t.plan_seq = pv.seq AND t.task_id = c.task_id
)
SELECT f.*,
       s.agent, s.agent_version, s.model, s.task_type AS session_type, s.ruleset,
       s.started_at, s.day, s.week,
       -- The type the events give the task, if any: its own task_type, else
       -- its session's. Analyses classify the description where it is NULL.
       coalesce(nullif(trim(f.own_type), ''), nullif(trim(s.task_type), '')) AS given_type,
       CASE WHEN nullif(trim(f.own_type), '') IS NOT NULL THEN 'task'
            WHEN nullif(trim(s.task_type), '') IS NOT NULL THEN 'session' END AS given_source,
       -- The taxonomy's type of the description where no type is given
       -- (NULL: no type matched), once classified = true. Stored rows are
       -- classified by the ingester's taxonomy (facts_classifier), pending
       -- rows not at all; analyses with another taxonomy ignore these.
       CAST(NULL AS VARCHAR) AS class_type,
       false AS classified
FROM facts f
JOIN session_facts_pending s USING (session);
