-- The session list (as sessions.sql) of the sessions stuck in the state
-- $stuck at least once (analyze/stuck_states.sql defines the states: loop,
-- churn, depth_limit, soft_cap, pending_at_end). A file of its own so that
-- the list without this filter does not compute the states.
-- Parameters: those of sessions.sql, and $stuck (VARCHAR: a state).
WITH s AS (
-- @include include/selected_sessions.sql
),
-- @include analyze/stuck_states.sql
SELECT
-- @include web/list_columns.sql
FROM s JOIN sessions v USING (session)
WHERE s.session IN (SELECT session FROM stuck WHERE state = $stuck)
-- @include web/list_filter.sql
-- Backwards from $before_at (the Previous link): the nearest first, which
-- the caller turns round; otherwise the CASEs are NULL and order nothing.
ORDER BY CASE WHEN $before_at IS NOT NULL THEN sort_at END,
         CASE WHEN $before_at IS NOT NULL THEN s.session END,
         sort_at DESC, s.session DESC
LIMIT $limit;
