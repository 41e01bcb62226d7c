-- analyze replans, extra.comparison: ended sessions that succeeded without a
-- valid replan (arm no_replan) against those that succeeded after two or
-- more valid replans (arm several). For each feature (kind, value), how many
-- sessions of each arm have it:
--   task_type      the session's task type (value NULL: unknown)
--   hint           a task of one of its plan versions carried this tool hint
--   stripped_hint  this hint was stripped from one of its plans
--   trigger        an update_task_plan call (valid or not) had this trigger
-- and, on every row, the size of each arm. A session of outcome 'unknown'
-- is in neither arm (success is false for it).
-- Parameters: as replans.sql ($by is not used: the comparison covers every
-- session the filter selects). ended and success: views/session_signals.sql.
WITH s AS (
    SELECT session, task_type,
           CASE WHEN valid_replans = 0 THEN 'no_replan' ELSE 'several' END AS arm
    FROM (
-- @include include/selected_sessions.sql
    )
    WHERE ended
      AND success
      AND (valid_replans = 0 OR valid_replans >= 2)
), arms AS (
    SELECT count(*) FILTER (WHERE arm = 'no_replan') AS no_replan_sessions,
           count(*) FILTER (WHERE arm = 'several')   AS several_sessions
    FROM s
), f AS (
    SELECT session, 'task_type' AS kind, task_type AS value FROM s
    UNION
    SELECT session, 'hint', tool_hint FROM plan_tasks
    WHERE tool_hint IS NOT NULL AND session IN (SELECT session FROM s)
    UNION
    SELECT session, 'stripped_hint', tool_hint FROM hints_stripped
    WHERE session IN (SELECT session FROM s)
    UNION
    SELECT session, 'trigger', trigger FROM replans
    WHERE session IN (SELECT session FROM s)
)
SELECT f.kind, f.value,
       count(*) FILTER (WHERE s.arm = 'no_replan') AS no_replan,
       count(*) FILTER (WHERE s.arm = 'several')   AS several,
       any_value(arms.no_replan_sessions)          AS no_replan_sessions,
       any_value(arms.several_sessions)            AS several_sessions
FROM f
JOIN s USING (session)
CROSS JOIN arms
GROUP BY f.kind, f.value
ORDER BY f.kind, f.value NULLS FIRST;
