-- Every update_task_plan call of one session (replans), valid or rejected,
-- by seq.
-- Parameters: $session (VARCHAR).
SELECT seq, time, replan, trigger, reason, valid, over_cap, error, task_count, kept, dropped_count
FROM replans
WHERE session = $session
ORDER BY seq, event_id;
