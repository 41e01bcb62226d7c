-- analyze effect: for each rule set version (kind 'ruleset') and each learned
-- rule (kind 'rule'), the ended sessions that applied it (treated: ruleset =
-- the version, or the rule id in rules) against comparable ended sessions
-- that did not (control).
-- Comparable: same group (the $by dimensions), same agent and same task type
-- (sessions of unknown task type form their own stratum), started in the
-- same window [$since, $until). A stratum in which either arm is empty is
-- left out: its treated sessions are counted in unmatched_sessions. The arms
-- are pooled over the remaining strata.
-- The session signals compared (success, first_try_success, replanned) are
-- defined in views/session_signals.sql.
-- Parameters: as replans.sql.
WITH s AS (
    SELECT *,
           CASE WHEN list_contains($by, 'agent')         THEN agent END         AS g_agent,
           CASE WHEN list_contains($by, 'agent_version') THEN agent_version END AS g_agent_version,
           CASE WHEN list_contains($by, 'model')         THEN model END         AS g_model,
           CASE WHEN list_contains($by, 'task_type')     THEN task_type END     AS g_task_type,
           CASE WHEN list_contains($by, 'day')
                THEN CAST(CAST(timezone('UTC', started_at) AS DATE) AS VARCHAR) END                     AS g_day,
           CASE WHEN list_contains($by, 'week')
                THEN CAST(CAST(date_trunc('week', timezone('UTC', started_at)) AS DATE) AS VARCHAR) END AS g_week,
           CASE WHEN list_contains($by, 'ruleset')       THEN ruleset END       AS g_ruleset
    FROM session_signals
    WHERE ($since IS NULL OR started_at >= $since)
      AND ($until IS NULL OR started_at < $until)
      AND ($agent IS NULL OR agent = $agent)
      AND ($model IS NULL OR model = $model)
      AND ($task_type IS NULL OR task_type = $task_type)
      AND ended
), applied AS (
    SELECT DISTINCT 'ruleset' AS kind, ruleset AS id, session FROM s WHERE ruleset IS NOT NULL
    UNION
    SELECT DISTINCT 'rule', unnest(rules), session FROM s
), strata AS (
    -- every ended session of each group and stratum
    SELECT g_agent, g_agent_version, g_model, g_task_type, g_day, g_week, g_ruleset,
           agent AS st_agent, task_type AS st_task_type,
           count(*)                           AS n,
           count(*) FILTER (WHERE success)    AS k_success,
           count(*) FILTER (WHERE first_try_success) AS k_first_try,
           count(*) FILTER (WHERE replanned)  AS k_replanned
    FROM s GROUP BY ALL
), treated AS (
    SELECT a.kind, a.id,
           g_agent, g_agent_version, g_model, g_task_type, g_day, g_week, g_ruleset,
           agent AS st_agent, task_type AS st_task_type,
           count(*)                           AS n,
           count(*) FILTER (WHERE success)    AS k_success,
           count(*) FILTER (WHERE first_try_success) AS k_first_try,
           count(*) FILTER (WHERE replanned)  AS k_replanned
    FROM applied a JOIN s USING (session)
    WHERE a.id IS NOT NULL
    GROUP BY ALL
), paired AS (
    SELECT t.*,
           st.n - t.n                     AS c_n,
           st.k_success - t.k_success     AS c_success,
           st.k_first_try - t.k_first_try AS c_first_try,
           st.k_replanned - t.k_replanned AS c_replanned
    FROM treated t
    JOIN strata st
      ON  t.g_agent IS NOT DISTINCT FROM st.g_agent
      AND t.g_agent_version IS NOT DISTINCT FROM st.g_agent_version
      AND t.g_model IS NOT DISTINCT FROM st.g_model
      AND t.g_task_type IS NOT DISTINCT FROM st.g_task_type
      AND t.g_day IS NOT DISTINCT FROM st.g_day
      AND t.g_week IS NOT DISTINCT FROM st.g_week
      AND t.g_ruleset IS NOT DISTINCT FROM st.g_ruleset
      AND t.st_agent IS NOT DISTINCT FROM st.st_agent
      AND t.st_task_type IS NOT DISTINCT FROM st.st_task_type
)
SELECT kind, id,
       g_agent AS agent, g_agent_version AS agent_version, g_model AS model,
       g_task_type AS task_type, g_day AS day, g_week AS week, g_ruleset AS ruleset,
       count(*) FILTER (WHERE c_n > 0)                                   AS strata,
       CAST(coalesce(sum(n) FILTER (WHERE c_n = 0), 0) AS BIGINT)        AS unmatched_sessions,
       CAST(coalesce(sum(n) FILTER (WHERE c_n > 0), 0) AS BIGINT)        AS treated_sessions,
       CAST(coalesce(sum(k_success) FILTER (WHERE c_n > 0), 0) AS BIGINT)   AS treated_successes,
       CAST(coalesce(sum(k_first_try) FILTER (WHERE c_n > 0), 0) AS BIGINT) AS treated_first_try,
       CAST(coalesce(sum(k_replanned) FILTER (WHERE c_n > 0), 0) AS BIGINT) AS treated_replanned,
       CAST(coalesce(sum(c_n), 0) AS BIGINT)                             AS control_sessions,
       CAST(coalesce(sum(c_success), 0) AS BIGINT)                       AS control_successes,
       CAST(coalesce(sum(c_first_try), 0) AS BIGINT)                     AS control_first_try,
       CAST(coalesce(sum(c_replanned), 0) AS BIGINT)                     AS control_replanned
FROM paired
GROUP BY ALL
ORDER BY kind DESC, id, agent, agent_version, model, task_type, day, week, ruleset;
