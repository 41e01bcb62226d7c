-- The session list of the pages: one page of the sessions that pass the
-- filter, the latest started first (ties: by session id, descending), at
-- most $limit rows after the cursor ($after_at, $after_session). The
-- caller asks one row more than it shows, to know whether a next page
-- exists.
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
ORDER BY sort_at DESC, s.session DESC
LIMIT $limit;
