-- analyze replans: replan statistics per group of sessions.
-- Parameters: $since, $until, $agent, $model, $task_type (NULL = no filter),
-- $by (grouping dimensions). Counts come from agent.plan.updated events
-- (session_facts), not from the agents' own reports.
WITH s AS (
    SELECT * FROM session_facts
    WHERE ($since IS NULL OR started_at >= $since)
      AND ($until IS NULL OR started_at < $until)
      AND ($agent IS NULL OR agent = $agent)
      AND ($model IS NULL OR model = $model)
      AND ($task_type IS NULL OR task_type = $task_type)
)
SELECT
    CASE WHEN list_contains($by, 'agent')         THEN agent END                 AS agent,
    CASE WHEN list_contains($by, 'agent_version') THEN agent_version END         AS agent_version,
    CASE WHEN list_contains($by, 'model')         THEN model END                 AS model,
    CASE WHEN list_contains($by, 'task_type')     THEN task_type END             AS task_type,
    CASE WHEN list_contains($by, 'day')           THEN CAST(day AS VARCHAR) END  AS day,
    CASE WHEN list_contains($by, 'week')          THEN CAST(week AS VARCHAR) END AS week,
    CASE WHEN list_contains($by, 'ruleset')       THEN ruleset END               AS ruleset,
    count(*) FILTER (WHERE ended)                                                AS sessions,
    count(*) FILTER (WHERE NOT ended)                                            AS open_sessions,
    count(*) FILTER (WHERE ended AND valid_replans > 0)                          AS replanned,
    coalesce(sum(valid_replans) FILTER (WHERE ended), 0)                         AS valid_replans,
    count(*) FILTER (WHERE ended AND outcome = 'success' AND replan_attempts = 0) AS first_try_successes,
    count(*) FILTER (WHERE ended AND outcome = 'success')                        AS successes,
    count(*) FILTER (WHERE ended AND valid_replans = 0)                          AS n_0,
    count(*) FILTER (WHERE ended AND valid_replans = 0 AND outcome = 'success')  AS s_0,
    count(*) FILTER (WHERE ended AND valid_replans = 1)                          AS n_1,
    count(*) FILTER (WHERE ended AND valid_replans = 1 AND outcome = 'success')  AS s_1,
    count(*) FILTER (WHERE ended AND valid_replans = 2)                          AS n_2,
    count(*) FILTER (WHERE ended AND valid_replans = 2 AND outcome = 'success')  AS s_2,
    count(*) FILTER (WHERE ended AND valid_replans >= 3)                         AS n_3plus,
    count(*) FILTER (WHERE ended AND valid_replans >= 3 AND outcome = 'success') AS s_3plus,
    count(*) FILTER (WHERE ended AND over_cap)                                   AS over_cap_sessions,
    coalesce(sum(invalid_replans) FILTER (WHERE ended), 0)                       AS invalid_replans,
    coalesce(sum(stripped_hints) FILTER (WHERE ended), 0)                        AS stripped_hints,
    count(*) FILTER (WHERE ended AND reported_replans IS DISTINCT FROM replan_attempts) AS reported_mismatch,
    median(epoch_ms(first_replan_at) - epoch_ms(started_at)) FILTER (WHERE first_replan_at IS NOT NULL) AS median_ms_to_first_replan
FROM s
GROUP BY ALL
ORDER BY ALL;
