-- analyze cost: what a session costs, per group of sessions and outcome.
-- Parameters: $since, $until (TIMESTAMPTZ; NULL = open), $agent, $model,
-- $task_type (VARCHAR; NULL = no filter), $by (VARCHAR[]: the grouping
-- dimensions), as replans.sql.
-- Every ended session of a known outcome is one of (views/session_signals.sql
-- defines the signals):
--   first_try_success      success without a single update_task_plan call
--   success_after_replans  success after one or more (valid or not)
--   failure                any other outcome but 'unknown' (partial_success,
--                          failure, aborted, timeout)
-- Sessions of outcome 'unknown' are left out. A session's cost:
--   model_calls    its agent.model.called events (model_calls); NULL when
--                  it has none (its agent does not report them), and then
--                  left out of the model calls figures
--   tokens         their input_tokens + output_tokens (cached ones are a
--                  part of the input); NULL when none of its calls reported
--                  any, and then left out of the tokens figures
--   real_tool_calls  its agent.tool.called with control false
--   duration_ms    from its start to agent.session.ended
-- One row per group and outcome class that occurs: sessions, and for each
-- cost its sum (<cost>_sum) and the sum of its squares (<cost>_sq, exact
-- integers) over the sessions (model calls: over model_calls_sessions,
-- those with any; tokens: over tokens_sessions, those with tokens); the analyzer derives the mean, the sample standard deviation
-- and the mean's interval from them.
WITH s AS (
-- @include include/selected_sessions.sql
), sd AS (
    SELECT session, started_at, ended_at,
           CASE WHEN first_try_success THEN 'first_try_success'
                WHEN success           THEN 'success_after_replans'
                ELSE 'failure' END AS outcome_class,
           real_tool_calls,
-- @include include/by_dimensions.sql
    FROM s WHERE ended AND NOT unknown_outcome
), m AS (
    SELECT session, count(*) AS model_calls,
           sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
           sum(cached_input_tokens) AS cached_input_tokens
    FROM model_calls SEMI JOIN sd USING (session)
    GROUP BY session
), per AS (
    SELECT sd.*,
           m.model_calls,
           m.input_tokens, m.output_tokens, m.cached_input_tokens,
           CASE WHEN m.input_tokens IS NOT NULL OR m.output_tokens IS NOT NULL
                THEN coalesce(m.input_tokens, 0) + coalesce(m.output_tokens, 0) END AS tokens,
           greatest(epoch_ms(sd.ended_at) - epoch_ms(sd.started_at), 0) AS duration_ms
    FROM sd LEFT JOIN m USING (session)
), agg AS (
    SELECT agent, agent_version, model, task_type, day, week, ruleset, outcome_class,
           CASE outcome_class WHEN 'first_try_success' THEN 1 WHEN 'success_after_replans' THEN 2 ELSE 3 END AS ord,
           count(*)                       AS sessions,
           count(model_calls)             AS model_calls_sessions,
           sum(model_calls)               AS model_calls_sum,
           sum(CAST(model_calls AS HUGEINT) * model_calls) AS model_calls_sq,
           count(tokens)                  AS tokens_sessions,
           sum(tokens)                    AS tokens_sum,
           sum(CAST(tokens AS HUGEINT) * tokens) AS tokens_sq,
           sum(input_tokens)              AS input_tokens_sum,
           sum(output_tokens)             AS output_tokens_sum,
           sum(cached_input_tokens)       AS cached_input_tokens_sum,
           sum(real_tool_calls)           AS real_tool_calls_sum,
           sum(CAST(real_tool_calls AS HUGEINT) * real_tool_calls) AS real_tool_calls_sq,
           sum(duration_ms)               AS duration_ms_sum,
           sum(CAST(duration_ms AS HUGEINT) * duration_ms) AS duration_ms_sq
    FROM per
    GROUP BY ALL
)
SELECT * EXCLUDE (ord)
FROM agg
ORDER BY agent, agent_version, model, task_type, day, week, ruleset, ord;
