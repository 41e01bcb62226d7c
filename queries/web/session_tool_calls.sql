-- The tool calls of one session (tool_calls), by seq, at most $limit (the
-- page says when there are more).
-- Parameters: $session (VARCHAR), $limit (BIGINT).
SELECT seq, time, task_id, tool, hint, ok, error_kind, error, duration_ms, control
FROM tool_calls
WHERE session = $session
ORDER BY seq, event_id
LIMIT $limit;
