-- The filter every analysis applies to sessions: started in [$since,
-- $until), of agent $agent, of model $model, each NULL for no limit. The
-- conditions, joined by AND, on the columns started_at, agent and model of
-- the rows filtered. Not a statement: include/selected_sessions.sql and
-- analyze/mappings_task_types.sql include it in a WHERE clause where they
-- say "@include include/session_filter.sql"; a line after it may add
-- conditions with AND.
-- Parameters: $since, $until (TIMESTAMPTZ; NULL = open), $agent, $model
-- (VARCHAR; NULL = all).
($since IS NULL OR started_at >= $since)
AND ($until IS NULL OR started_at < $until)
AND ($agent IS NULL OR agent = $agent)
AND ($model IS NULL OR model = $model)
