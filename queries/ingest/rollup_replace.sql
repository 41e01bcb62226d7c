-- Build the replace rollup rows (replace_days, migrations/0012_rollups.sql)
-- of the days in rollup_touched from the stored facts, with the queries'
-- own definitions: the task types of analyze/mappings_task_types.sql, the
-- evidence of include/replace_outcomes.sql and the counts of
-- include/replace_counts.sql. Run as ingest/rollup_hints.sql is.
-- Parameters: those of analyze/mappings_task_types.sql (the filter NULL,
-- the store's taxonomy).
INSERT INTO replace_days BY NAME
WITH
task_facts AS (
    SELECT * FROM task_facts_stored WHERE day IN (SELECT day FROM rollup_touched)
),
-- @include analyze/mappings_task_types.sql
-- @include include/replace_outcomes.sql
rc AS (
-- @include include/replace_counts.sql
)
SELECT * FROM rc;
