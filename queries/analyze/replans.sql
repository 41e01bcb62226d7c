-- analyze replans: replan statistics per group of sessions.
-- Parameters: $since, $until (TIMESTAMPTZ; NULL = open), $agent, $model,
-- $task_type (VARCHAR; NULL = no filter), $by (VARCHAR[]: the grouping
-- dimensions). A session is in the window when it started in
-- [$since, $until). Replans are counted from agent.plan.updated events
-- (session_facts), not from the agents' own reports. The session signals
-- (ended, success, first_try_success, replanned, over_cap,
-- reported_replans_mismatch, has_plan, inferred_redecisions) are defined in
-- views/session_signals.sql. planless_sessions, inferred_sessions and
-- inferred_redecisions are over the ended sessions without a plan: their
-- re-decisions are inferred from tool calls (views/inferred_redecisions.sql),
-- an estimate kept out of every replan count.
-- Every count except open_sessions is over ended sessions; a session with
-- no agent.session.ended (still running, or its agent died) is open.
-- unknown_outcome counts the ended sessions with outcome 'unknown' (no
-- evidence of how they went): the success rates leave them out, so their
-- denominators are sessions - unknown_outcome (and n_k - u_k for the
-- sessions with k valid replans); the other figures count them.
-- day and week are UTC dates (week: the Monday), whatever the client's
-- TimeZone setting.
WITH s AS (
-- @include include/selected_sessions.sql
), t AS (
    -- update_task_plan calls per session and trigger, valid or not
    SELECT session,
           count(*) FILTER (WHERE trigger = 'model')         AS t_model,
           count(*) FILTER (WHERE trigger = 'depth_limit')   AS t_depth_limit,
           count(*) FILTER (WHERE trigger = 'tool_failures') AS t_tool_failures,
           count(*) FILTER (WHERE trigger = 'no_progress')   AS t_no_progress,
           count(*) FILTER (WHERE trigger = 'user')          AS t_user
    FROM replans GROUP BY session
), e AS (
    SELECT s.*, t.* EXCLUDE (session) FROM s LEFT JOIN t USING (session)
)
SELECT
-- @include include/by_dimensions.sql
  , count(*) FILTER (WHERE ended)                                                   AS sessions,
    count(*) FILTER (WHERE NOT ended)                                               AS open_sessions,
    count(*) FILTER (WHERE ended AND unknown_outcome)                               AS unknown_outcome,
    count(*) FILTER (WHERE ended AND replanned)                                     AS replanned,
    CAST(coalesce(sum(valid_replans) FILTER (WHERE ended), 0) AS BIGINT)            AS valid_replans,
    count(*) FILTER (WHERE ended AND first_try_success)                             AS first_try_successes,
    count(*) FILTER (WHERE ended AND success)                                       AS successes,
    count(*) FILTER (WHERE ended AND valid_replans = 0)                             AS n_0,
    count(*) FILTER (WHERE ended AND valid_replans = 0 AND success)                 AS s_0,
    count(*) FILTER (WHERE ended AND valid_replans = 0 AND unknown_outcome)         AS u_0,
    count(*) FILTER (WHERE ended AND valid_replans = 1)                             AS n_1,
    count(*) FILTER (WHERE ended AND valid_replans = 1 AND success)                 AS s_1,
    count(*) FILTER (WHERE ended AND valid_replans = 1 AND unknown_outcome)         AS u_1,
    count(*) FILTER (WHERE ended AND valid_replans = 2)                             AS n_2,
    count(*) FILTER (WHERE ended AND valid_replans = 2 AND success)                 AS s_2,
    count(*) FILTER (WHERE ended AND valid_replans = 2 AND unknown_outcome)         AS u_2,
    count(*) FILTER (WHERE ended AND valid_replans >= 3)                            AS n_3plus,
    count(*) FILTER (WHERE ended AND valid_replans >= 3 AND success)                AS s_3plus,
    count(*) FILTER (WHERE ended AND valid_replans >= 3 AND unknown_outcome)        AS u_3plus,
    count(*) FILTER (WHERE ended AND over_cap)                                      AS over_cap_sessions,
    CAST(coalesce(sum(invalid_replans) FILTER (WHERE ended), 0) AS BIGINT)       AS invalid_replans,
    CAST(coalesce(sum(t_model) FILTER (WHERE ended), 0) AS BIGINT)               AS trigger_model,
    CAST(coalesce(sum(t_depth_limit) FILTER (WHERE ended), 0) AS BIGINT)         AS trigger_depth_limit,
    CAST(coalesce(sum(t_tool_failures) FILTER (WHERE ended), 0) AS BIGINT)       AS trigger_tool_failures,
    CAST(coalesce(sum(t_no_progress) FILTER (WHERE ended), 0) AS BIGINT)         AS trigger_no_progress,
    CAST(coalesce(sum(t_user) FILTER (WHERE ended), 0) AS BIGINT)                AS trigger_user,
    CAST(coalesce(sum(stripped_hints) FILTER (WHERE ended), 0) AS BIGINT)        AS stripped_hints,
    count(*) FILTER (WHERE ended AND reported_replans_mismatch)                     AS reported_mismatch,
    count(*) FILTER (WHERE ended AND first_replan_at IS NOT NULL)                AS with_first_replan,
    CAST(median(epoch_ms(first_replan_at) - epoch_ms(started_at))
         FILTER (WHERE ended AND first_replan_at IS NOT NULL) AS DOUBLE)         AS median_ms_to_first_replan,
    count(*) FILTER (WHERE ended AND NOT has_plan)                               AS planless_sessions,
    count(*) FILTER (WHERE ended AND inferred_redecisions > 0)                   AS inferred_sessions,
    CAST(coalesce(sum(inferred_redecisions) FILTER (WHERE ended), 0) AS BIGINT)  AS inferred_redecisions
FROM e
GROUP BY ALL
ORDER BY ALL;
