-- Views the analyzers (and researchers) build on. Version 1 of the analysis
-- contract; see docs/sql.md.

-- One row per session seen, with what the analyzers group and filter by and
-- the counts they need. Replans are counted from agent.plan.updated events,
-- not from the agent's own report (reported_replans), so the two can be
-- compared.
CREATE VIEW session_facts AS
WITH r AS (
    SELECT session,
           count(*)                                 AS replan_attempts,
           count(*) FILTER (WHERE valid)            AS valid_replans,
           count(*) FILTER (WHERE NOT valid)        AS invalid_replans,
           bool_or(over_cap)                        AS over_cap,
           min(time)                                AS first_replan_at
    FROM replans GROUP BY session
), h AS (
    SELECT session, count(*) AS stripped_hints,
           count(*) FILTER (WHERE reason = 'unavailable') AS hallucinated_hints
    FROM hints_stripped GROUP BY session
), tc AS (
    SELECT session,
           count(*) FILTER (WHERE NOT control)              AS real_tool_calls,
           count(*) FILTER (WHERE NOT control AND NOT ok)   AS failed_real_tool_calls
    FROM tool_calls GROUP BY session
), first_event AS (
    SELECT session, min(time) AS first_time, any_value(source) AS source, any_value(agent) AS agent
    FROM events GROUP BY session
)
SELECT
    f.session,
    coalesce(s.source, f.source)                           AS source,
    coalesce(s.agent, f.agent)                             AS agent,
    s.agent_version,
    s.model,
    s.task_type,
    s.ruleset,
    s.rules,
    coalesce(s.started_at, f.first_time)                   AS started_at,
    CAST(date_trunc('day', coalesce(s.started_at, f.first_time)) AS DATE)  AS day,
    CAST(date_trunc('week', coalesce(s.started_at, f.first_time)) AS DATE) AS week,
    s.ended_at,
    s.has_end                                              AS ended,
    s.outcome,
    s.reported_replans,
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
LEFT JOIN sessions s USING (session)
LEFT JOIN r USING (session)
LEFT JOIN h USING (session)
LEFT JOIN tc USING (session);

-- Each tool call with the task it belongs to: the task with its task_id in
-- the plan version in force at the call (the latest plan version with a
-- smaller seq in the same session; ids are reused after a replan renumbers).
CREATE VIEW tool_call_tasks AS
SELECT c.*,
       pv.seq          AS plan_seq,
       pt.description  AS task_description,
       pt.task_type    AS task_own_type,
       pt.tool_hint    AS task_hint
FROM tool_calls c
ASOF LEFT JOIN plans pv ON c.session = pv.session AND c.seq > pv.seq
LEFT JOIN plan_tasks pt ON pt.session = c.session AND pt.plan_seq = pv.seq AND pt.task_id = c.task_id;
