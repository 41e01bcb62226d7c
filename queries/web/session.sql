-- One session of the pages: its signals (views/session_signals.sql) and what
-- the sessions view adds (goal, version, tools, the agent's own counts).
-- Parameters: $session (VARCHAR: the session id).
SELECT s.*, v.agent_version AS version, v.goal, v.tools, v.reported_replans AS agent_replans,
       v.tool_calls AS agent_tool_calls, v.duration_ms, v.feedback, v.rules AS start_rules
FROM session_signals s JOIN sessions v USING (session)
WHERE s.session = $session;
