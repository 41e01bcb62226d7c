-- What else happened to the tasks of one session, by seq: the depth limits
-- reached (depth_limits) and the tasks completed (task_completions).
-- Parameters: $session (VARCHAR).
SELECT 'depth_limit' AS kind, seq, time, task_id, tool_calls, call_limit, NULL AS completion, NULL AS summary
FROM depth_limits WHERE session = $session
UNION ALL
SELECT 'completed', seq, time, task_id, tool_calls, NULL, completion, summary
FROM task_completions WHERE session = $session
ORDER BY seq;
