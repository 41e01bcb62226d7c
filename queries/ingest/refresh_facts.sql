-- Refresh the stored facts of the pending sessions (see
-- migrations/0003_stored_facts.sql): replace their rows in
-- session_facts_stored and task_facts_stored with freshly computed ones,
-- then clear facts_pending. Run in one transaction, so a reader sees the
-- pending sessions either computed on the fly or stored, never both; after
-- the last pass of a refresh, ingest/facts_generation.sql records it.
--
-- The cost follows the rows since the oldest pending session first
-- appeared, not the database (migrations/0008_facts_bounds.sql): the typed
-- tables are read from facts_from, the row counts of the generation before
-- the one that first stored the oldest pending session (of the last
-- generation for sessions never stored). Sessions last minutes, so that is
-- the rows of the last minutes; a session that gets an event hours after
-- it started makes its refresh read the hours of rows since (still
-- exact). facts_sessions is read whole once (a session id and a number per
-- session).
CREATE OR REPLACE TEMP TABLE facts_refresh_scope AS
SELECT p.session, s.since
FROM (SELECT DISTINCT session FROM facts_pending) p
LEFT JOIN facts_sessions s USING (session);
SET VARIABLE facts_from = (
    WITH g AS (
        SELECT * FROM facts_generations
        WHERE gen = (SELECT min(since) FROM (
            SELECT since FROM facts_refresh_scope WHERE since IS NOT NULL
            UNION ALL
            SELECT max(gen) FROM facts_generations))
    )
    -- No generation (none yet, or a session with since = -1): every row.
    SELECT {
        'events': coalesce(max(events), 0),
        'session_starts': coalesce(max(session_starts), 0),
        'session_ends': coalesce(max(session_ends), 0),
        'plans': coalesce(max(plans), 0),
        'plan_tasks': coalesce(max(plan_tasks), 0),
        'replans': coalesce(max(replans), 0),
        'replan_dropped': coalesce(max(replan_dropped), 0),
        'hints_stripped': coalesce(max(hints_stripped), 0),
        'tool_calls': coalesce(max(tool_calls), 0),
        'task_completions': coalesce(max(task_completions), 0)
    } FROM g
);
-- The stored rows being replaced are found by started_at, which DuckDB's
-- zonemaps bound (their rowids move: these tables see deletes): a stored
-- started_at is the time of one of the session's events then, so no
-- earlier than the session's earliest event now.
SET VARIABLE facts_stored_from = (
    SELECT coalesce(min(time), '-infinity'::TIMESTAMPTZ) FROM main.events
    WHERE rowid >= getvariable('facts_from').events
      AND session IN (SELECT session FROM facts_refresh_scope)
);
CREATE OR REPLACE TEMP TABLE facts_refresh_sessions AS
WITH
-- @include include/facts_rows.sql
-- @include include/session_facts_of.sql
-- The days whose day rollups the store builds again after the refresh
-- (ingest/rollup_hints.sql): those of the rows replaced and of the new.
CREATE TEMP TABLE IF NOT EXISTS rollup_touched (day DATE);
INSERT INTO rollup_touched
SELECT DISTINCT day FROM session_facts_stored
WHERE started_at >= getvariable('facts_stored_from')
  AND session IN (SELECT session FROM facts_refresh_scope)
UNION
SELECT DISTINCT day FROM facts_refresh_sessions;
DELETE FROM session_facts_stored
WHERE started_at >= getvariable('facts_stored_from')
  AND session IN (SELECT session FROM facts_refresh_scope);
DELETE FROM task_facts_stored
WHERE started_at >= getvariable('facts_stored_from')
  AND session IN (SELECT session FROM facts_refresh_scope);
INSERT INTO session_facts_stored BY NAME SELECT * FROM facts_refresh_sessions;
INSERT INTO task_facts_stored BY NAME
WITH
-- @include include/facts_rows.sql
session_facts_pending AS (SELECT * FROM facts_refresh_sessions),
-- @include include/task_facts_of.sql
-- Sessions stored for the first time: their rows all come after the row
-- counts of the last generation (none: -1, every row).
INSERT INTO facts_sessions
SELECT session, (SELECT coalesce(max(gen), -1) FROM facts_generations)
FROM facts_refresh_scope WHERE since IS NULL;
DELETE FROM facts_pending;
DROP TABLE facts_refresh_sessions;
DROP TABLE facts_refresh_scope;
