-- The hints sanitising stripped from one session's plans (hints_stripped),
-- by seq.
-- Parameters: $session (VARCHAR).
SELECT seq, time, task_id, tool_hint, phase, reason, rule_id
FROM hints_stripped
WHERE session = $session
ORDER BY seq, event_id;
