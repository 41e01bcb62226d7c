-- A refresh of a large backlog of pending sessions (a migrated database)
-- stores their facts in passes, within one transaction: the backlog moves
-- to a numbered temp table, and each pass puts its share back into
-- facts_pending (facts_backlog_pass.sql) and runs refresh_facts.sql.
CREATE OR REPLACE TEMP TABLE facts_backlog AS
SELECT session, row_number() OVER () AS n FROM facts_pending;
DELETE FROM facts_pending;
