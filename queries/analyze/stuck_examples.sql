-- analyze stuck -examples: example sessions of each state where agents get
-- stuck (analyze/stuck_states.sql defines the states).
-- Parameters: $since, $until (TIMESTAMPTZ; NULL = open), $agent, $model,
-- $task_type (VARCHAR; NULL = no filter), as replans.sql, and $examples
-- (BIGINT: at most this many sessions per state).
-- One row per state and session: the ended sessions with the state, the
-- latest started first (ties: by session id), at most $examples per state;
-- seq and detail are those of the session's first occurrence, occurrences
-- counts them all. recovered: the session ended with outcome 'success'.
WITH s AS (
-- @include include/selected_sessions.sql
),
-- @include analyze/stuck_states.sql
, per_session AS (
    SELECT x.state, x.session, s.agent, s.task_type, s.outcome, s.success AS recovered, s.started_at,
           count(*)                     AS occurrences,
           min(x.seq)                   AS seq,
           arg_min(x.detail, x.seq)     AS detail
    FROM stuck x JOIN s USING (session)
    WHERE s.ended
    GROUP BY ALL
)
SELECT state, session, agent, task_type, outcome, recovered, occurrences, seq, detail
FROM per_session
QUALIFY row_number() OVER (PARTITION BY state ORDER BY started_at DESC, session) <= $examples
ORDER BY CASE state WHEN 'loop' THEN 1 WHEN 'churn' THEN 2 WHEN 'depth_limit' THEN 3
                    WHEN 'soft_cap' THEN 4 ELSE 5 END,
         started_at DESC, session;
