-- The pending tasks each replan of one session replaced (replan_dropped),
-- by replan and position.
-- Parameters: $session (VARCHAR).
SELECT replan_seq, position, task_id, description, tool_hint, task_type
FROM replan_dropped
WHERE session = $session
ORDER BY replan_seq, position;
