-- session_facts gains has_plan and inferred_redecisions (see
-- views/session_facts_pending.sql and docs/sql.md, "session_signals"),
-- stored like the other facts so session_signals reads them without
-- computing planned_sessions and inferred_redecisions on every query.
ALTER TABLE session_facts_stored ADD COLUMN has_plan BOOLEAN;
ALTER TABLE session_facts_stored ADD COLUMN inferred_redecisions BIGINT;

-- The stored rows have neither yet: every stored session is pending again,
-- so the views compute its facts until the ingester's next refresh (or a
-- rebuild) stores them.
INSERT INTO facts_pending SELECT session FROM session_facts_stored;
