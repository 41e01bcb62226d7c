-- Build the hint rollup rows (hint_days, migrations/0012_rollups.sql) of
-- the days in rollup_touched from the stored facts, with the queries'
-- own definitions: the task types of analyze/mappings_task_types.sql and
-- the counts of include/hint_counts.sql, per every dimension. The store
-- runs it after a refresh of the facts and their classification, in the
-- same transaction, having deleted those days' rows (docs/sql.md, "Day
-- rollups").
-- Parameters: those of analyze/mappings_task_types.sql (the filter NULL,
-- the store's taxonomy) and $by (every dimension).
INSERT INTO hint_days BY NAME
WITH
task_facts AS (
    SELECT * FROM task_facts_stored WHERE day IN (SELECT day FROM rollup_touched)
),
-- @include analyze/mappings_task_types.sql
hc_cells AS (
-- @include include/hint_cells.sql
),
hc AS (
-- @include include/hint_counts.sql
)
SELECT * REPLACE (CAST(day AS DATE) AS day, CAST(week AS DATE) AS week) FROM hc;
