-- The plan versions of one session (plans), each with its tasks
-- (plan_tasks) in plan order: one row per task, the versions by seq.
-- Parameters: $session (VARCHAR).
SELECT p.seq, p.time, p.kind, p.replan, p.origin, p.parse_error, p.task_count,
       t.position, t.task_id, t.description, t.tool_hint, t.completed, t.task_type, t.is_new
FROM plans p
LEFT JOIN plan_tasks t ON t.session = p.session AND t.plan_seq = p.seq
WHERE p.session = $session
ORDER BY p.seq, p.event_id, t.position;
