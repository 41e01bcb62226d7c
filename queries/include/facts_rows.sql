-- Not a statement: CTEs named like the typed tables the facts read, each
-- the table's rows from the row the refresh starts at (the variable
-- facts_from, set by ingest/refresh_facts.sql), included before
-- include/session_facts_of.sql or include/task_facts_of.sql so that those
-- read these instead of the whole tables. The rows before hold none of the
-- pending sessions' rows (migrations/0008_facts_bounds.sql), so the facts
-- are those of the views; the rowid bound is a constant once bound, which
-- DuckDB turns into skipping the row groups below it.
events AS NOT MATERIALIZED (
    SELECT * FROM main.events WHERE rowid >= getvariable('facts_from').events
), session_starts AS NOT MATERIALIZED (
    SELECT * FROM main.session_starts WHERE rowid >= getvariable('facts_from').session_starts
), session_ends AS NOT MATERIALIZED (
    SELECT * FROM main.session_ends WHERE rowid >= getvariable('facts_from').session_ends
), plans AS NOT MATERIALIZED (
    SELECT * FROM main.plans WHERE rowid >= getvariable('facts_from').plans
), plan_tasks AS NOT MATERIALIZED (
    SELECT * FROM main.plan_tasks WHERE rowid >= getvariable('facts_from').plan_tasks
), replans AS NOT MATERIALIZED (
    SELECT * FROM main.replans WHERE rowid >= getvariable('facts_from').replans
), replan_dropped AS NOT MATERIALIZED (
    SELECT * FROM main.replan_dropped WHERE rowid >= getvariable('facts_from').replan_dropped
), hints_stripped AS NOT MATERIALIZED (
    SELECT * FROM main.hints_stripped WHERE rowid >= getvariable('facts_from').hints_stripped
), tool_calls AS NOT MATERIALIZED (
    SELECT * FROM main.tool_calls WHERE rowid >= getvariable('facts_from').tool_calls
), task_completions AS NOT MATERIALIZED (
    SELECT * FROM main.task_completions WHERE rowid >= getvariable('facts_from').task_completions
),
