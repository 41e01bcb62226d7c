-- Not a statement: the CTEs and the SELECT of session_facts for the sessions
-- of facts_pending, included right after a WITH (and, in the refresh, after
-- CTEs named like the typed tables that hold only the rows the refresh
-- needs: ingest/refresh_facts.sql). views/session_facts_pending.sql is the
-- view of every pending session; ingest/refresh_facts.sql stores the same
-- rows, so the stored facts and the view cannot differ.
scope AS (
    SELECT DISTINCT session FROM facts_pending
), st AS (
    SELECT * FROM session_starts WHERE session IN (SELECT session FROM scope)
    QUALIFY row_number() OVER (PARTITION BY session ORDER BY seq, event_id) = 1
), en AS (
    SELECT * FROM session_ends WHERE session IN (SELECT session FROM scope)
    QUALIFY row_number() OVER (PARTITION BY session ORDER BY seq, event_id) = 1
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
    -- Deterministic choices (arg_min), so stored rows equal a rebuild's.
    SELECT session, min(time) AS first_time,
           arg_min(source, (time, seq, source, id)) AS source,
           arg_min(agent, (time, seq, source, id)) AS agent
    FROM events WHERE session IN (SELECT session FROM scope) GROUP BY session
), planned AS (
    -- planned_sessions.sql, for the pending sessions.
    SELECT session FROM plans WHERE session IN (SELECT session FROM scope)
    UNION
    SELECT session FROM replans WHERE session IN (SELECT session FROM scope)
), calls AS (
    -- include/inferred_rule.sql (the rule of inferred_redecisions.sql), for
    -- the pending sessions without a plan; only the count per session is
    -- kept (a test in internal/store checks it is that view's per session).
    SELECT c.session, c.source, c.event_id, c.seq, c.time, c.tool, c.ok,
           coalesce(c.error_kind, '')   AS error_kind,
           row_number() OVER w - 1      AS position,
           lag(c.tool) OVER w           AS prev_tool,
           lag(c.ok) OVER w             AS prev_ok
    FROM tool_calls c ANTI JOIN planned p USING (session)
    WHERE NOT c.control AND c.session IN (SELECT session FROM scope)
    WINDOW w AS (PARTITION BY c.session ORDER BY c.seq, c.event_id)
),
-- @include include/inferred_rule.sql
, inferred AS (
    SELECT session, count(*) AS n FROM found GROUP BY session
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
    coalesce(tc.failed_real_tool_calls, 0)                 AS failed_real_tool_calls,
    p.session IS NOT NULL                                  AS has_plan,
    CASE WHEN p.session IS NULL THEN coalesce(i.n, 0) END  AS inferred_redecisions
FROM first_event f
LEFT JOIN st USING (session)
LEFT JOIN en USING (session)
LEFT JOIN r USING (session)
LEFT JOIN h USING (session)
LEFT JOIN tc USING (session)
LEFT JOIN planned p USING (session)
LEFT JOIN inferred i USING (session);
