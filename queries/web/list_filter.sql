-- The conditions of the session list (web/sessions.sql, web/sessions_stuck.sql)
-- on the selected sessions s (include/selected_sessions.sql) joined with the
-- sessions view as v, after its own WHERE: each parameter NULL for no limit.
-- Not a statement: the list files include it where they say
-- "@include web/list_filter.sql".
-- Parameters: $outcome (VARCHAR: the session's outcome; 'open' for a
-- session that has not ended), $min_replans (BIGINT: at least this many
-- valid replans), $hint (VARCHAR: a tool call or a plan task of the session
-- has this hint), $q (VARCHAR: the session id starts with it, or the goal
-- holds it, case-insensitive), $after_at, $after_session (the keyset
-- cursor of the Next link: only sessions after the last one of the page
-- before, in the list's order), $before_at, $before_session (the cursor of
-- the Previous link: only sessions before the first one of the page after;
-- the list files then order the other way round, nearest first), $limit
-- (BIGINT: rows returned).
  AND ($outcome IS NULL OR (CASE WHEN s.ended THEN s.outcome ELSE 'open' END) = $outcome)
  AND ($min_replans IS NULL OR s.valid_replans >= $min_replans)
  AND ($hint IS NULL
       OR EXISTS (SELECT 1 FROM tool_calls c WHERE c.session = s.session AND c.hint = $hint)
       OR EXISTS (SELECT 1 FROM plan_tasks t WHERE t.session = s.session AND t.tool_hint = $hint))
  AND ($q IS NULL OR starts_with(s.session, $q) OR contains(lower(v.goal), lower($q)))
  AND ($after_at IS NULL
       OR coalesce(s.started_at, TIMESTAMPTZ '1970-01-01 00:00:00+00') < $after_at
       OR (coalesce(s.started_at, TIMESTAMPTZ '1970-01-01 00:00:00+00') = $after_at AND s.session < $after_session))
  AND ($before_at IS NULL
       OR coalesce(s.started_at, TIMESTAMPTZ '1970-01-01 00:00:00+00') > $before_at
       OR (coalesce(s.started_at, TIMESTAMPTZ '1970-01-01 00:00:00+00') = $before_at AND s.session > $before_session))
