-- analyze stuck: where agents get stuck, per group of sessions and state.
-- Parameters: $since, $until (TIMESTAMPTZ; NULL = open), $agent, $model,
-- $task_type (VARCHAR; NULL = no filter), $by (VARCHAR[]: the grouping
-- dimensions), as replans.sql. The states (loop, churn, depth_limit,
-- soft_cap, pending_at_end) and their occurrences are defined in
-- analyze/stuck_states.sql. One row per group and state, every state in
-- every group (zero counts included; without -by always five rows):
--   sessions         ended sessions of the group
--   unknown_outcome  of those, outcome 'unknown'
--   stuck_sessions   ended sessions with at least one occurrence of the state
--   occurrences      its occurrences in those sessions
--   recovered        stuck sessions that ended with outcome 'success'
--   stuck_unknown    stuck sessions of outcome 'unknown': the recovered
--                    share is over stuck_sessions - stuck_unknown
--   top_detail       what preceded it most often (the occurrences' detail;
--                    ties: the first in text order), NULL when none
--   top_detail_occurrences  its occurrences
-- Open sessions (no agent.session.ended) are counted nowhere.
WITH s AS (
-- @include include/selected_sessions.sql
),
-- @include analyze/stuck_states.sql
, states(state, ord) AS (
    VALUES ('loop', 1), ('churn', 2), ('depth_limit', 3), ('soft_cap', 4), ('pending_at_end', 5)
), sd AS (
    SELECT session, success, unknown_outcome,
-- @include include/by_dimensions.sql
    FROM s WHERE ended
), o AS (
    SELECT sd.*, st.state, st.ord, x.seq, x.detail,
           count(x.detail) OVER (PARTITION BY sd.agent, sd.agent_version, sd.model, sd.task_type, sd.day,
                                              sd.week, sd.ruleset, st.state, x.detail) AS n_detail
    FROM sd CROSS JOIN states st
    LEFT JOIN stuck x ON x.session = sd.session AND x.state = st.state
), agg AS (
    SELECT agent, agent_version, model, task_type, day, week, ruleset, state, ord,
           count(DISTINCT session)                                            AS sessions,
           count(DISTINCT session) FILTER (WHERE unknown_outcome)             AS unknown_outcome,
           count(DISTINCT session) FILTER (WHERE seq IS NOT NULL)             AS stuck_sessions,
           count(seq)                                                         AS occurrences,
           count(DISTINCT session) FILTER (WHERE seq IS NOT NULL AND success) AS recovered,
           count(DISTINCT session) FILTER (WHERE seq IS NOT NULL AND unknown_outcome) AS stuck_unknown,
           arg_min(detail, (-n_detail, detail)) FILTER (WHERE detail IS NOT NULL)     AS top_detail,
           coalesce(max(n_detail) FILTER (WHERE detail IS NOT NULL), 0)              AS top_detail_occurrences
    FROM o
    GROUP BY ALL
    UNION ALL
    SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, state, ord, 0, 0, 0, 0, 0, 0, NULL, 0
    FROM states
    WHERE len($by) = 0 AND NOT EXISTS (SELECT 1 FROM sd)
)
SELECT agent, agent_version, model, task_type, day, week, ruleset, state,
       sessions, unknown_outcome, stuck_sessions, occurrences, recovered, stuck_unknown,
       top_detail, top_detail_occurrences
FROM agg
ORDER BY agent, agent_version, model, task_type, day, week, ruleset, ord;
