-- Stored analysis facts: session_facts and task_facts kept as tables,
-- refreshed per session, so the analyzers read one row per session or per
-- fact instead of re-deriving them (joins over every tool call and plan)
-- on each query. See docs/sql.md, "Stored facts".
--
-- A session's facts depend on all its events, which may arrive in any order
-- and in any batch. So each batch marks the sessions it touched as pending
-- (derive/facts_pending.sql), and a refresh (ingest/refresh_facts.sql, run
-- by the ingester every few seconds and when it goes idle) recomputes the
-- facts of the pending sessions from the typed tables, replacing what was
-- stored for them. The views session_facts and task_facts read the stored
-- rows of the sessions that are not pending and compute the pending ones on
-- the fly, so a query always sees every committed event, refreshed or not.

-- Sessions whose stored facts are missing or out of date.
CREATE TABLE facts_pending (session VARCHAR NOT NULL);

-- session_facts (0002) computed for the pending sessions only. Every scan is
-- restricted to them, so the cost follows the number of pending sessions.
CREATE VIEW session_facts_pending AS
WITH scope AS (
    SELECT DISTINCT session FROM facts_pending
), st AS (
    SELECT * FROM session_starts WHERE session IN (SELECT session FROM scope)
    QUALIFY row_number() OVER (PARTITION BY session ORDER BY seq) = 1
), en AS (
    SELECT * FROM session_ends WHERE session IN (SELECT session FROM scope)
    QUALIFY row_number() OVER (PARTITION BY session ORDER BY seq) = 1
), r AS (
    SELECT session,
           count(*)                                 AS replan_attempts,
           count(*) FILTER (WHERE valid)            AS valid_replans,
           count(*) FILTER (WHERE NOT valid)        AS invalid_replans,
           bool_or(over_cap)                        AS over_cap,
           min(time)                                AS first_replan_at
    FROM replans WHERE session IN (SELECT session FROM scope) GROUP BY session
), h AS (
    SELECT session, count(*) AS stripped_hints,
           count(*) FILTER (WHERE reason = 'unavailable') AS hallucinated_hints
    FROM hints_stripped WHERE session IN (SELECT session FROM scope) GROUP BY session
), tc AS (
    SELECT session,
           count(*) FILTER (WHERE NOT control)              AS real_tool_calls,
           count(*) FILTER (WHERE NOT control AND NOT ok)   AS failed_real_tool_calls
    FROM tool_calls WHERE session IN (SELECT session FROM scope) GROUP BY session
), first_event AS (
    SELECT session, min(time) AS first_time, any_value(source) AS source, any_value(agent) AS agent
    FROM events WHERE session IN (SELECT session FROM scope) GROUP BY session
)
SELECT
    f.session,
    coalesce(st.source, en.source, f.source)               AS source,
    f.agent                                                AS agent,
    st.agent_version,
    st.model,
    st.task_type,
    st.ruleset,
    st.rules,
    coalesce(st.time, f.first_time)                        AS started_at,
    CAST(date_trunc('day', timezone('UTC', coalesce(st.time, f.first_time))) AS DATE)  AS day,
    CAST(date_trunc('week', timezone('UTC', coalesce(st.time, f.first_time))) AS DATE) AS week,
    en.time                                                AS ended_at,
    en.session IS NOT NULL                                 AS ended,
    en.outcome,
    en.replans                                             AS reported_replans,
    coalesce(r.replan_attempts, 0)                         AS replan_attempts,
    coalesce(r.valid_replans, 0)                           AS valid_replans,
    coalesce(r.invalid_replans, 0)                         AS invalid_replans,
    coalesce(r.over_cap, false)                            AS over_cap,
    r.first_replan_at,
    coalesce(h.stripped_hints, 0)                          AS stripped_hints,
    coalesce(h.hallucinated_hints, 0)                      AS hallucinated_hints,
    coalesce(tc.real_tool_calls, 0)                        AS real_tool_calls,
    coalesce(tc.failed_real_tool_calls, 0)                 AS failed_real_tool_calls
FROM first_event f
LEFT JOIN st USING (session)
LEFT JOIN en USING (session)
LEFT JOIN r USING (session)
LEFT JOIN h USING (session)
LEFT JOIN tc USING (session);

-- Every fact the hints, mappings and rules analyses count, for the pending
-- sessions, attached to its task and with its session's attributes
-- (column fact):
--   call       a real tool call (control calls excluded), attached to the
--              task with its task_id in the plan version in force at the
--              call: the latest plan version of the session with a smaller
--              seq (ids are reused after a replan renumbers);
--   planned    a task entering a plan: every task of a created plan and the
--              new tasks of a valid replan (plan_tasks.is_new), except the
--              pending tasks a replan re-lists: is_new is true for those
--              too, because kept lists only completed tasks. A new task is
--              a re-listing when the version before had a pending task with
--              the same description and hint that the replan did not keep
--              (as many re-listings per description and hint as such tasks);
--   dropped    a pending task a valid replan dropped;
--   stripped   a hint removed as unavailable (hallucinated), with the task
--              of the plan version it was removed from;
--   completed  an agent.task.completed, with the task in the plan version
--              in force at it (completion says how it ended).
CREATE VIEW task_facts_pending AS
WITH scope AS (
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
            WHEN nullif(trim(s.task_type), '') IS NOT NULL THEN 'session' END AS given_source
FROM facts f
JOIN session_facts_pending s USING (session);

-- The stored rows: the same columns as the views above.
CREATE TABLE session_facts_stored AS SELECT * FROM session_facts_pending LIMIT 0;
CREATE TABLE task_facts_stored AS SELECT * FROM task_facts_pending LIMIT 0;

-- What the analyzers and researchers read: stored rows for the sessions that
-- are not pending, computed rows for those that are.
DROP VIEW session_facts;
CREATE VIEW session_facts AS
SELECT s.* FROM session_facts_stored s ANTI JOIN facts_pending p USING (session)
UNION ALL
SELECT * FROM session_facts_pending;

CREATE VIEW task_facts AS
SELECT f.* FROM task_facts_stored f ANTI JOIN facts_pending p USING (session)
UNION ALL
SELECT * FROM task_facts_pending;

-- A database written before this migration: every session is pending until
-- the ingester's first refresh.
INSERT INTO facts_pending SELECT DISTINCT session FROM events;
