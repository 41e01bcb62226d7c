-- Sessions: one row per session seen, started or not, ended or not.
CREATE OR REPLACE VIEW sessions AS
WITH ids AS (
    SELECT session FROM session_starts
    UNION
    SELECT session FROM session_ends
)
SELECT
    ids.session,
    coalesce(s.source, e.source)         AS source,
    s.agent, s.agent_version, s.model, s.goal, s.task_type, s.ruleset, s.rules, s.tools,
    s.time                               AS started_at,
    e.time                               AS ended_at,
    e.outcome,
    e.replans                            AS reported_replans,
    e.tool_calls, e.failed_tool_calls, e.iterations, e.duration_ms, e.feedback,
    s.session IS NOT NULL                AS has_start,
    e.session IS NOT NULL                AS has_end
FROM ids
LEFT JOIN (SELECT * FROM session_starts QUALIFY row_number() OVER (PARTITION BY session ORDER BY seq) = 1) s USING (session)
LEFT JOIN (SELECT * FROM session_ends QUALIFY row_number() OVER (PARTITION BY session ORDER BY seq) = 1) e USING (session);
