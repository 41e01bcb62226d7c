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
-- defined in views/session_signals.sql. Sessions of outcome 'unknown'
-- (unknown_outcome) count in every arm and stratum, and in replanned, but
-- not in the success and first-try success rates: their denominators are
-- treated_sessions - treated_unknown and control_sessions - control_unknown.
-- Parameters: as replans.sql.
WITH s AS (
-- @include include/selected_sessions.sql
      AND ended
), g AS (
    -- each session's group (the $by dimensions), stratum and signals
    SELECT session, agent AS st_agent, task_type AS st_task_type,
           success, first_try_success, replanned, unknown_outcome,
-- @include include/by_dimensions.sql
    FROM s
), applied AS (
    SELECT DISTINCT 'ruleset' AS kind, ruleset AS id, session FROM s WHERE ruleset IS NOT NULL
    UNION
    SELECT DISTINCT 'rule', unnest(rules), session FROM s
), strata AS (
    -- every ended session of each group and stratum
    SELECT agent, agent_version, model, task_type, day, week, ruleset,
           st_agent, st_task_type,
           count(*)                           AS n,
           count(*) FILTER (WHERE success)    AS k_success,
           count(*) FILTER (WHERE first_try_success) AS k_first_try,
           count(*) FILTER (WHERE replanned)  AS k_replanned,
           count(*) FILTER (WHERE unknown_outcome) AS k_unknown
    FROM g GROUP BY ALL
), treated AS (
    SELECT a.kind, a.id,
           agent, agent_version, model, task_type, day, week, ruleset,
           st_agent, st_task_type,
           count(*)                           AS n,
           count(*) FILTER (WHERE success)    AS k_success,
           count(*) FILTER (WHERE first_try_success) AS k_first_try,
           count(*) FILTER (WHERE replanned)  AS k_replanned,
           count(*) FILTER (WHERE unknown_outcome) AS k_unknown
    FROM applied a JOIN g USING (session)
    WHERE a.id IS NOT NULL
    GROUP BY ALL
), paired AS (
    SELECT t.*,
           st.n - t.n                     AS c_n,
           st.k_success - t.k_success     AS c_success,
           st.k_first_try - t.k_first_try AS c_first_try,
           st.k_replanned - t.k_replanned AS c_replanned,
           st.k_unknown - t.k_unknown     AS c_unknown
    FROM treated t
    JOIN strata st
      ON  t.agent IS NOT DISTINCT FROM st.agent
      AND t.agent_version IS NOT DISTINCT FROM st.agent_version
      AND t.model IS NOT DISTINCT FROM st.model
      AND t.task_type IS NOT DISTINCT FROM st.task_type
      AND t.day IS NOT DISTINCT FROM st.day
      AND t.week IS NOT DISTINCT FROM st.week
      AND t.ruleset IS NOT DISTINCT FROM st.ruleset
      AND t.st_agent IS NOT DISTINCT FROM st.st_agent
      AND t.st_task_type IS NOT DISTINCT FROM st.st_task_type
)
SELECT kind, id, agent, agent_version, model, task_type, day, week, ruleset,
       count(*) FILTER (WHERE c_n > 0)                                   AS strata,
       CAST(coalesce(sum(n) FILTER (WHERE c_n = 0), 0) AS BIGINT)        AS unmatched_sessions,
       CAST(coalesce(sum(n) FILTER (WHERE c_n > 0), 0) AS BIGINT)        AS treated_sessions,
       CAST(coalesce(sum(k_success) FILTER (WHERE c_n > 0), 0) AS BIGINT)   AS treated_successes,
       CAST(coalesce(sum(k_first_try) FILTER (WHERE c_n > 0), 0) AS BIGINT) AS treated_first_try,
       CAST(coalesce(sum(k_replanned) FILTER (WHERE c_n > 0), 0) AS BIGINT) AS treated_replanned,
       CAST(coalesce(sum(k_unknown) FILTER (WHERE c_n > 0), 0) AS BIGINT)   AS treated_unknown,
       CAST(coalesce(sum(c_n), 0) AS BIGINT)                             AS control_sessions,
       CAST(coalesce(sum(c_success), 0) AS BIGINT)                       AS control_successes,
       CAST(coalesce(sum(c_first_try), 0) AS BIGINT)                     AS control_first_try,
       CAST(coalesce(sum(c_replanned), 0) AS BIGINT)                     AS control_replanned,
       CAST(coalesce(sum(c_unknown), 0) AS BIGINT)                       AS control_unknown
FROM paired
GROUP BY ALL
ORDER BY kind DESC, id, agent, agent_version, model, task_type, day, week, ruleset;
