-- analyze trend: the evolution curve, one row per period (and group).
-- Parameters: as replans.sql, plus $every ('day' or 'week'). A session
-- belongs to the period (UTC day, or ISO week from Monday) in which it
-- started. Counts are over ended sessions and their real tool calls
-- (control calls such as complete_task excluded), except open_sessions,
-- rulesets and no_ruleset_sessions, which cover every session started in the
-- period: rulesets lists the rule set versions those sessions loaded. The
-- session signals (ended, success, first_try_success, replanned, has_plan,
-- inferred_redecisions) are defined in views/session_signals.sql;
-- planless_sessions and inferred_sessions are the ended sessions without a
-- plan and those of them with an inferred re-decision (an estimate, kept out
-- of replanned and valid_replans). unknown_outcome counts the ended sessions
-- with outcome 'unknown': the success and first-try success rates leave them
-- out (denominator sessions - unknown_outcome); the other figures count
-- them. Sessions whose start is outside years 0001-9999 UTC (stored before the decoder refused such times) have no
-- period: their row has period NULL, which the caller reports as a
-- data-quality count instead of a period.
WITH p AS (
    SELECT *,
           CASE WHEN year(timezone('UTC', started_at)) BETWEEN 1 AND 9999
                THEN CAST(date_trunc($every, timezone('UTC', started_at)) AS DATE) END AS period
    FROM (
-- @include include/selected_sessions.sql
    )
), s AS (
    -- A session without a period has no day or week either.
    SELECT * REPLACE (CASE WHEN period IS NOT NULL THEN day END  AS day,
                      CASE WHEN period IS NOT NULL THEN week END AS week)
    FROM p
)
SELECT
    CAST(period AS VARCHAR)                                                      AS period,
-- @include include/by_dimensions.sql
  , count(*) FILTER (WHERE ended)                                                    AS sessions,
    count(*) FILTER (WHERE NOT ended)                                                AS open_sessions,
    count(*) FILTER (WHERE ended AND unknown_outcome)                                AS unknown_outcome,
    count(*) FILTER (WHERE ended AND success)                                        AS successes,
    count(*) FILTER (WHERE ended AND first_try_success)                              AS first_try_successes,
    count(*) FILTER (WHERE ended AND replanned)                                      AS replanned,
    CAST(coalesce(sum(valid_replans) FILTER (WHERE ended), 0) AS BIGINT)          AS valid_replans,
    CAST(coalesce(sum(real_tool_calls) FILTER (WHERE ended), 0) AS BIGINT)        AS real_tool_calls,
    CAST(coalesce(sum(failed_real_tool_calls) FILTER (WHERE ended), 0) AS BIGINT) AS failed_real_tool_calls,
    CAST(coalesce(sum(stripped_hints) FILTER (WHERE ended), 0) AS BIGINT)         AS stripped_hints,
    CAST(coalesce(sum(hallucinated_hints) FILTER (WHERE ended), 0) AS BIGINT)     AS hallucinated_hints,
    coalesce(list_sort(list_distinct(list(ruleset) FILTER (WHERE ruleset IS NOT NULL))), []::VARCHAR[]) AS rulesets,
    count(*) FILTER (WHERE ruleset IS NULL)                                          AS no_ruleset_sessions,
    count(*) FILTER (WHERE ended AND NOT has_plan)                                   AS planless_sessions,
    count(*) FILTER (WHERE ended AND inferred_redecisions > 0)                       AS inferred_sessions
FROM s
GROUP BY ALL
ORDER BY ALL;
