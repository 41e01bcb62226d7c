-- analyze stuck -triggers: replan triggers that work, per group of sessions
-- and visible trigger.
-- Parameters: $since, $until (TIMESTAMPTZ; NULL = open), $agent, $model,
-- $task_type (VARCHAR; NULL = no filter), $by (VARCHAR[]: the grouping
-- dimensions), as replans.sql.
-- Every agent.plan.updated (a replans row, valid or not) of an ended session
-- gets one visible trigger, read from the events since the plan version
-- before it (plans: the agent.plan.created or a valid agent.plan.updated
-- with a lower seq; the session's start when there is none), the first that
-- applies of:
--   failed_hinted_call  the last real call (control false) since then
--                       failed and had a hint
--   depth_limit         an agent.depth_limit.reached since then
--   no_tool_call        no real call since then
--   user                the event's own trigger is 'user'
--   none_visible        otherwise
-- One row per group and visible trigger that occurs:
--   replans          agent.plan.updated events
--   sessions         ended sessions with at least one of them
--   unknown_outcome  of those, outcome 'unknown'
--   successes        of those, outcome 'success': the success rate is over
--                    sessions - unknown_outcome
-- A session with replans of several triggers counts under each.
WITH s AS (
-- @include include/selected_sessions.sql
), sd AS (
    SELECT session, success, unknown_outcome,
-- @include include/by_dimensions.sql
    FROM s WHERE ended
), r AS (
    SELECT r.session, r.seq, r.event_id, r.trigger,
           coalesce((SELECT max(p.seq) FROM plans p WHERE p.session = r.session AND p.seq < r.seq), 0) AS prev_seq
    FROM replans r SEMI JOIN sd USING (session)
), seen AS (
    SELECT r.*,
           (SELECT arg_max(struct_pack(ok := c.ok, hint := c.hint), (c.seq, c.event_id))
            FROM tool_calls c
            WHERE c.session = r.session AND NOT c.control AND c.seq > r.prev_seq AND c.seq < r.seq) AS last_call,
           EXISTS (SELECT 1 FROM depth_limits d
                   WHERE d.session = r.session AND d.seq > r.prev_seq AND d.seq < r.seq) AS depth_hit
    FROM r
), visible AS (
    SELECT session,
           CASE WHEN last_call IS NOT NULL AND NOT last_call.ok AND last_call.hint IS NOT NULL THEN 'failed_hinted_call'
                WHEN depth_hit                                                                THEN 'depth_limit'
                WHEN last_call IS NULL                                                        THEN 'no_tool_call'
                WHEN trigger = 'user'                                                         THEN 'user'
                ELSE 'none_visible' END AS visible_trigger
    FROM seen
), agg AS (
    SELECT sd.agent, sd.agent_version, sd.model, sd.task_type, sd.day, sd.week, sd.ruleset,
           v.visible_trigger,
           CASE v.visible_trigger WHEN 'failed_hinted_call' THEN 1 WHEN 'depth_limit' THEN 2
                WHEN 'no_tool_call' THEN 3 WHEN 'user' THEN 4 ELSE 5 END   AS ord,
           count(*)                                                   AS replans,
           count(DISTINCT session)                                    AS sessions,
           count(DISTINCT session) FILTER (WHERE sd.unknown_outcome)  AS unknown_outcome,
           count(DISTINCT session) FILTER (WHERE sd.success)          AS successes
    FROM visible v JOIN sd USING (session)
    GROUP BY ALL
)
SELECT * EXCLUDE (ord)
FROM agg
ORDER BY agent, agent_version, model, task_type, day, week, ruleset, ord;
