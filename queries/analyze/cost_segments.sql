-- analyze cost -view segments: what a session spends in each plan segment,
-- per group of sessions and segment.
-- Parameters: $since, $until (TIMESTAMPTZ; NULL = open), $agent, $model,
-- $task_type (VARCHAR; NULL = no filter), $by (VARCHAR[]: the grouping
-- dimensions), as replans.sql.
-- A session's replans are its agent.plan.updated events (replans rows,
-- valid or not). An event at seq s is in segment k, the number of the
-- session's replans with a lower seq; the segment's time runs from the
-- session's start (k = 0) or its k-th replan to its next replan or the
-- session's end. Each segment is one of:
--   no_replan            the whole of a session without a replan
--   before_first_replan  k = 0 of a session with replans
--   between_replans      0 < k < the session's replans (two replans or more)
--   after_last_replan    k = the session's replans
-- One row per group and segment that occurs, over ended sessions:
--   sessions             sessions with the segment
--   segments             the segments (between_replans: several a session)
--   model_calls          agent.model.called events in them (model_calls)
--   input_tokens, output_tokens, cached_input_tokens
--                        their tokens summed, NULL when no call reported any
--   calls_with_tokens    model calls that reported input or output tokens
--   real_tool_calls      agent.tool.called with control false
--   failed_real_tool_calls  of those, ok false
--   duration_ms          the segments' time summed
-- The replan events themselves are in no segment's counts.
WITH s AS (
-- @include include/selected_sessions.sql
), sd AS (
    SELECT session, started_at, ended_at, replan_attempts,
-- @include include/by_dimensions.sql
    FROM s WHERE ended
), r AS (
    SELECT r.session, r.seq, r.time,
           row_number() OVER w AS k,
           lead(r.time) OVER w AS next_time
    FROM replans r SEMI JOIN sd USING (session)
    WINDOW w AS (PARTITION BY r.session ORDER BY r.seq, r.event_id)
), seg AS (
    -- one row per segment: k, its start and end time
    SELECT sd.session, 0 AS k, sd.started_at AS t0, coalesce(r.time, sd.ended_at) AS t1
    FROM sd LEFT JOIN r ON r.session = sd.session AND r.k = 1
    UNION ALL
    SELECT r.session, r.k, r.time, coalesce(r.next_time, sd.ended_at)
    FROM r JOIN sd USING (session)
), seg_of AS (
    -- the segment of an event at (session, seq): the k of the last replan
    -- before it, 0 when none
    SELECT x.session, x.seq, x.event_id, coalesce(r.k, 0) AS k
    FROM (SELECT session, seq, event_id FROM model_calls SEMI JOIN sd USING (session)
          UNION ALL
          SELECT session, seq, event_id FROM tool_calls SEMI JOIN sd USING (session) WHERE NOT control) x
    ASOF LEFT JOIN r ON x.session = r.session AND x.seq > r.seq
), m AS (
    SELECT o.session, o.k, count(*) AS model_calls,
           sum(c.input_tokens) AS input_tokens, sum(c.output_tokens) AS output_tokens,
           sum(c.cached_input_tokens) AS cached_input_tokens,
           count(*) FILTER (WHERE c.input_tokens IS NOT NULL OR c.output_tokens IS NOT NULL) AS calls_with_tokens
    FROM model_calls c JOIN seg_of o USING (session, seq, event_id)
    GROUP BY o.session, o.k
), t AS (
    SELECT o.session, o.k, count(*) AS real_tool_calls, count(*) FILTER (WHERE NOT c.ok) AS failed_real_tool_calls
    FROM tool_calls c JOIN seg_of o USING (session, seq, event_id)
    WHERE NOT c.control
    GROUP BY o.session, o.k
), labelled AS (
    SELECT sd.*, seg.k,
           CASE WHEN sd.replan_attempts = 0  THEN 'no_replan'
                WHEN seg.k = 0               THEN 'before_first_replan'
                WHEN seg.k < sd.replan_attempts THEN 'between_replans'
                ELSE 'after_last_replan' END AS segment,
           greatest(coalesce(epoch_ms(seg.t1) - epoch_ms(seg.t0), 0), 0) AS ms,
           m.model_calls, m.input_tokens, m.output_tokens, m.cached_input_tokens, m.calls_with_tokens,
           t.real_tool_calls, t.failed_real_tool_calls
    FROM sd JOIN seg USING (session)
    LEFT JOIN m ON m.session = seg.session AND m.k = seg.k
    LEFT JOIN t ON t.session = seg.session AND t.k = seg.k
), agg AS (
    SELECT agent, agent_version, model, task_type, day, week, ruleset, segment,
           CASE segment WHEN 'no_replan' THEN 1 WHEN 'before_first_replan' THEN 2
                        WHEN 'between_replans' THEN 3 ELSE 4 END AS ord,
           count(DISTINCT session)                  AS sessions,
           count(*)                                 AS segments,
           coalesce(sum(model_calls), 0)            AS model_calls,
           sum(input_tokens)                        AS input_tokens,
           sum(output_tokens)                       AS output_tokens,
           sum(cached_input_tokens)                 AS cached_input_tokens,
           coalesce(sum(calls_with_tokens), 0)      AS calls_with_tokens,
           coalesce(sum(real_tool_calls), 0)        AS real_tool_calls,
           coalesce(sum(failed_real_tool_calls), 0) AS failed_real_tool_calls,
           sum(ms)                                  AS duration_ms
    FROM labelled
    GROUP BY ALL
)
SELECT agent, agent_version, model, task_type, day, week, ruleset, segment,
       sessions, segments, model_calls, input_tokens, output_tokens, cached_input_tokens,
       calls_with_tokens, real_tool_calls, failed_real_tool_calls, duration_ms
FROM agg
ORDER BY agent, agent_version, model, task_type, day, week, ruleset, ord;
