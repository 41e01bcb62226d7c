-- analyze cost -view after-failure: what an agent did after a failed hinted
-- call, and what getting past it cost, per group, hint and next step.
-- Parameters: $since, $until (TIMESTAMPTZ; NULL = open), $agent, $model,
-- $task_type (VARCHAR; NULL = no filter), $by (VARCHAR[]: the grouping
-- dimensions), as replans.sql.
-- A failed hinted call is a real call (agent.tool.called, control false)
-- with ok false and a hint, in an ended session. Its next step is the first
-- of these after it (seq order):
--   replan   an agent.plan.updated (valid or not) before any real call
--   retry    the next real call, of the same tool
--   switch   the next real call, of another tool
--   stop     neither: the session ended
-- It is recovered when a real call with ok true follows it in the session;
-- the cost of recovering is what was spent from the failure to that call:
-- the model calls (agent.model.called) with seq between the two (NULL when
-- the session has no model call at all: its agent does not report them),
-- their tokens (input + output; NULL when none reported any), the real calls
-- after the failure up to and with the successful one, and the time between
-- the two calls.
-- One row per group, hint and next step: failures, sessions (with such a
-- failure), successes (of those sessions, outcome 'success'; over sessions -
-- unknown_outcome), recovered, and for each cost of recovering its sum
-- (<cost>_sum) and the sum of its squares (<cost>_sq, exact integers) over
-- the recovered failures (model calls: over model_calls_failures, those of
-- sessions with model calls; tokens: over tokens_failures, those with
-- tokens);
-- the analyzer derives the means and their intervals.
WITH s AS (
-- @include include/selected_sessions.sql
), sd AS (
    SELECT session, success, unknown_outcome,
-- @include include/by_dimensions.sql
    FROM s WHERE ended
), calls AS (
    SELECT c.session, c.seq, c.event_id, c.time, c.tool, c.hint, c.ok,
           row_number() OVER (PARTITION BY c.session ORDER BY c.seq, c.event_id) AS n
    FROM tool_calls c SEMI JOIN sd USING (session)
    WHERE NOT c.control
), fails AS (
    SELECT * FROM calls WHERE NOT ok AND hint IS NOT NULL
), next_call AS (
    SELECT f.session, f.n, c.tool AS next_tool, c.seq AS next_seq
    FROM fails f JOIN calls c ON c.session = f.session AND c.n = f.n + 1
), next_replan AS (
    SELECT f.session, f.n, r.seq AS replan_seq
    FROM fails f ASOF JOIN replans r ON r.session = f.session AND f.seq < r.seq
), recovery AS (
    SELECT f.session, f.n, c.seq AS ok_seq, c.time AS ok_time, c.n AS ok_n
    FROM fails f ASOF JOIN (SELECT * FROM calls WHERE ok) c ON c.session = f.session AND f.n < c.n
), steps AS (
    SELECT f.session, f.seq, f.time, f.n, f.tool, f.hint,
           CASE WHEN nr.replan_seq IS NOT NULL AND (nc.next_seq IS NULL OR nr.replan_seq < nc.next_seq) THEN 'replan'
                WHEN nc.next_tool = f.tool THEN 'retry'
                WHEN nc.next_tool IS NOT NULL THEN 'switch'
                ELSE 'stop' END AS next_step,
           rc.ok_seq, rc.ok_time, rc.ok_n
    FROM fails f
    LEFT JOIN next_call nc USING (session, n)
    LEFT JOIN next_replan nr USING (session, n)
    LEFT JOIN recovery rc USING (session, n)
), reporting AS (
    SELECT DISTINCT session FROM model_calls SEMI JOIN sd USING (session)
), costs AS (
    SELECT st.*,
           CASE WHEN st.session IN (SELECT session FROM reporting)
                THEN (SELECT count(*) FROM model_calls m
                      WHERE m.session = st.session AND m.seq > st.seq AND m.seq < st.ok_seq) END AS model_calls,
           (SELECT CASE WHEN count(m.input_tokens) + count(m.output_tokens) > 0
                        THEN coalesce(sum(m.input_tokens), 0) + coalesce(sum(m.output_tokens), 0) END
            FROM model_calls m
            WHERE m.session = st.session AND m.seq > st.seq AND m.seq < st.ok_seq) AS tokens,
           st.ok_n - st.n AS real_tool_calls,
           greatest(epoch_ms(st.ok_time) - epoch_ms(st.time), 0) AS duration_ms
    FROM steps st
    WHERE st.ok_seq IS NOT NULL
), joined AS (
    SELECT st.session, st.hint, st.next_step, st.ok_seq IS NOT NULL AS recovered,
           c.model_calls, c.tokens, c.real_tool_calls, c.duration_ms,
           sd.* EXCLUDE (session)
    FROM steps st JOIN sd USING (session)
    LEFT JOIN costs c USING (session, n)
), agg AS (
    SELECT agent, agent_version, model, task_type, day, week, ruleset, hint, next_step,
           CASE next_step WHEN 'replan' THEN 1 WHEN 'retry' THEN 2 WHEN 'switch' THEN 3 ELSE 4 END AS ord,
           count(*)                                                  AS failures,
           count(DISTINCT session)                                   AS sessions,
           count(DISTINCT session) FILTER (WHERE unknown_outcome)    AS unknown_outcome,
           count(DISTINCT session) FILTER (WHERE success)            AS successes,
           count(*) FILTER (WHERE recovered)                         AS recovered,
           count(model_calls)           AS model_calls_failures,
           sum(model_calls)             AS model_calls_sum,
           sum(CAST(model_calls AS HUGEINT) * model_calls) AS model_calls_sq,
           count(tokens)                AS tokens_failures,
           sum(tokens)                  AS tokens_sum,
           sum(CAST(tokens AS HUGEINT) * tokens) AS tokens_sq,
           sum(real_tool_calls)         AS real_tool_calls_sum,
           sum(CAST(real_tool_calls AS HUGEINT) * real_tool_calls) AS real_tool_calls_sq,
           sum(duration_ms)             AS duration_ms_sum,
           sum(CAST(duration_ms AS HUGEINT) * duration_ms) AS duration_ms_sq
    FROM joined
    GROUP BY ALL
)
SELECT * EXCLUDE (ord)
FROM agg
ORDER BY agent, agent_version, model, task_type, day, week, ruleset, hint, ord;
