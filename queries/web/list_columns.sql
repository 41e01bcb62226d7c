-- The columns and order of the session list (web/sessions.sql,
-- web/sessions_stuck.sql): the session's signals (views/session_signals.sql)
-- and its goal; sort_at is the list's sort key, the start time (1970 for a
-- session whose start was never seen). Not a statement: the list files
-- include it right after SELECT where they say "@include web/list_columns.sql".
-- Parameters: none of its own.
       s.session, s.agent, s.model, s.task_type, s.ruleset, s.started_at, s.ended_at, s.ended,
       s.outcome, s.valid_replans, s.invalid_replans, s.over_cap, s.real_tool_calls,
       s.failed_real_tool_calls, s.stripped_hints, v.goal,
       coalesce(s.started_at, TIMESTAMPTZ '1970-01-01 00:00:00+00') AS sort_at
