-- The states where agents get stuck, one row per occurrence: the CTE stuck
-- (session, state, seq, detail), and the CTEs it is built from. The one
-- definition of every state; analyze/stuck.sql counts the occurrences and
-- analyze/stuck_examples.sql lists example sessions. Not a statement: they
-- include it where they say "@include analyze/stuck_states.sql", right
-- after a CTE named s (the selected sessions, include/selected_sessions.sql)
-- and its comma. Occurrences are those of the sessions of s, ended or not;
-- the includers count the ended ones.
-- Parameters: none of its own.
--
-- A real call is an agent.tool.called with control false (schema/README.md,
-- "control calls"), in (seq, event_id) order within its session.
--   loop            a failed real call right after a failed real call of
--                   the same tool with the same arguments (the same
--                   args_digest, tool_call_args) or the same error text
--                   (both non-NULL; SkillLite's "⚠️ LOOP DETECTED: …"
--                   suffix removed before comparing), or a failed real call
--                   whose error holds "LOOP DETECTED" (SkillLite says it is
--                   looping). One
--                   occurrence per streak of such calls of one tool, at its
--                   first repeat; detail: the tool and the call's hint
--   churn           an agent.plan.updated (a replans row, valid or not) with
--                   no real call since the plan event before it (the
--                   agent.plan.created or another agent.plan.updated); detail:
--                   its trigger
--   depth_limit     an agent.depth_limit.reached; detail: the tool and hint
--                   of the last real call before it ('no tool call' if none)
--   soft_cap        an agent.plan.updated with over_cap; detail: its trigger
--   pending_at_end  an ended session whose last plan version (plans, the
--                   highest seq) has a task that is neither completed in it
--                   nor closed by an agent.task.completed after it (any
--                   completion); one occurrence per session, at its
--                   agent.session.ended; detail: the tool and hint of the
--                   last real call before the end ('no tool call' if none)
calls AS (
    SELECT c.session, c.seq, c.event_id, c.tool, c.hint, c.ok, a.args_digest,
           regexp_replace(c.error, '(?s)\s*(\x{26A0}\x{FE0F}?)?\s*LOOP DETECTED:.*$', '') AS error_text,
           coalesce(contains(c.error, 'LOOP DETECTED'), false)                               AS loop_marker,
           c.tool || coalesce(' (hint ' || c.hint || ')', ' (no hint)')                      AS call_detail
    FROM tool_calls c SEMI JOIN s USING (session)
    LEFT JOIN tool_call_args a ON a.session = c.session AND a.seq = c.seq AND a.event_id = c.event_id
    WHERE NOT c.control
), call_pairs AS (
    SELECT *,
           lag(ok) OVER w         AS prev_ok,
           lag(tool) OVER w       AS prev_tool,
           lag(error_text) OVER w AS prev_error,
           lag(args_digest) OVER w AS prev_args
    FROM calls
    WINDOW w AS (PARTITION BY session ORDER BY seq, event_id)
), repeats AS (
    SELECT *,
           NOT ok AND (loop_marker
                       OR (prev_ok = false AND prev_tool = tool
                           AND (error_text = prev_error OR args_digest = prev_args))) AS is_repeat
    FROM call_pairs
), loop_starts AS (
    SELECT *, lag(is_repeat) OVER (PARTITION BY session ORDER BY seq, event_id) AS prev_repeat
    FROM repeats
), plan_events AS (
    SELECT p.session, p.seq, p.event_id, false AS is_replan, CAST(NULL AS VARCHAR) AS trigger
    FROM plans p SEMI JOIN s USING (session)
    WHERE p.kind = 'created'
    UNION ALL
    SELECT r.session, r.seq, r.event_id, true, r.trigger
    FROM replans r SEMI JOIN s USING (session)
), plan_steps AS (
    SELECT *, lag(seq) OVER (PARTITION BY session ORDER BY seq, event_id) AS prev_seq
    FROM plan_events
), last_plan AS (
    SELECT p.session, max(p.seq) AS plan_seq
    FROM plans p SEMI JOIN s USING (session)
    GROUP BY p.session
), pending AS (
    SELECT t.session, count(*) AS pending_tasks
    FROM last_plan l
    JOIN plan_tasks t ON t.session = l.session AND t.plan_seq = l.plan_seq
    WHERE NOT t.completed
      AND NOT EXISTS (SELECT 1 FROM task_completions c
                      WHERE c.session = t.session AND c.task_id = t.task_id AND c.seq > t.plan_seq)
    GROUP BY t.session
), ends AS (
    SELECT e.session, min(e.seq) AS seq
    FROM session_ends e SEMI JOIN s USING (session)
    GROUP BY e.session
), stuck AS (
    SELECT session, 'loop' AS state, seq, call_detail AS detail
    FROM loop_starts
    WHERE is_repeat AND NOT (coalesce(prev_repeat, false) AND prev_tool = tool)
    UNION ALL
    SELECT session, 'churn', seq, trigger
    FROM plan_steps p
    WHERE is_replan AND prev_seq IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.session = p.session AND c.seq > p.prev_seq AND c.seq < p.seq)
    UNION ALL
    SELECT d.session, 'depth_limit', d.seq,
           coalesce((SELECT arg_max(c.call_detail, c.seq) FROM calls c WHERE c.session = d.session AND c.seq < d.seq), 'no tool call')
    FROM depth_limits d SEMI JOIN s USING (session)
    UNION ALL
    SELECT session, 'soft_cap', seq, trigger
    FROM replans r SEMI JOIN s USING (session)
    WHERE over_cap
    UNION ALL
    SELECT e.session, 'pending_at_end', e.seq,
           coalesce((SELECT arg_max(c.call_detail, c.seq) FROM calls c WHERE c.session = e.session AND c.seq < e.seq), 'no tool call')
    FROM ends e JOIN pending p USING (session)
)
