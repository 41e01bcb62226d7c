-- The session list of the pages: one page of the sessions that pass the
-- filter, the latest started first (ties: by session id, descending), at
-- most $limit rows after the cursor ($after_at, $after_session) or before
-- it ($before_at, $before_session). The caller asks one row more than it
-- shows, to know whether a page beyond exists.
-- Parameters: $since, $until (TIMESTAMPTZ; NULL = open), $agent, $model,
-- $task_type (VARCHAR; NULL = all), as include/selected_sessions.sql, and
-- those of list_filter.sql.
WITH s AS (
-- @include include/selected_sessions.sql
)
SELECT
-- @include web/list_columns.sql
FROM s JOIN sessions v USING (session)
WHERE true
-- @include web/list_filter.sql
-- Backwards from $before_at (the Previous link): the nearest first, which
-- the caller turns round; otherwise the CASEs are NULL and order nothing.
ORDER BY CASE WHEN $before_at IS NOT NULL THEN sort_at END,
         CASE WHEN $before_at IS NOT NULL THEN s.session END,
         sort_at DESC, s.session DESC
LIMIT $limit;
