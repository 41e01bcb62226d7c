-- Which days an analysis reads from the day rollups (migrations/
-- 0012_rollups.sql) and which from the facts. Not a statement: CTEs
-- included right after a WITH by analyze/hints.sql and
-- analyze/rules_replace.sql, where they say "@include
-- include/rollup_split.sql", before analyze/mappings_task_types.sql,
-- whose task_facts they replace with the facts of the days not read from
-- the rollups; include/rollup_served.sql selects the rollup rows of the
-- others. A day is read from the rollups when
--   the rollups were built with this taxonomy ($tax_id, ru_ok),
--   it lies whole in [$since, $until) (UTC days: from the first
--   midnight at or after $since to the last at or before $until, by
--   whole days of microseconds since the epoch, which DuckDB folds into
--   constants where timezone() would not; an open end is no bound), and
--   no pending session has its stored facts on it (ru_pending: those
--   facts, which the rollups hold, are not the session's facts now).
-- A pending session's facts now (ru_pending_facts) are computed whatever
-- their day: the rollups hold none of them.
-- Sessions with no day (a start outside years 0001-9999) are always
-- computed. The parts of task_facts are disjoint (views/task_facts.sql
-- splits the facts the same way between stored and pending sessions).
-- Parameters: $since, $until (TIMESTAMPTZ), $tax_id (VARCHAR).
ru_ok AS (
    SELECT count(*) > 0 AS ok FROM rollups WHERE classifier = $tax_id
),
-- The pending sessions' facts, computed once (views/task_facts_pending.sql).
ru_pending_facts AS MATERIALIZED (
    SELECT * FROM task_facts_pending
),
ru_pending AS (
    SELECT DISTINCT day FROM session_facts_stored WHERE session IN (SELECT session FROM facts_pending)
),
task_facts AS (
    -- The pending sessions' facts, whatever their day ...
    SELECT * FROM ru_pending_facts
    UNION ALL BY NAME
    -- ... and the stored facts of the other sessions (as
    -- views/task_facts.sql): all of them without rollups of this
    -- taxonomy ...
    SELECT f.* FROM task_facts_stored f ANTI JOIN facts_pending p USING (session)
    WHERE EXISTS (SELECT 1 FROM ru_ok WHERE NOT ok)
    UNION ALL BY NAME
    -- ... else those of the days outside the window's whole days
    -- (constants of the parameters, so that DuckDB skips the row groups
    -- of the days inside) ...
    SELECT f.* FROM task_facts_stored f ANTI JOIN facts_pending p USING (session)
    WHERE (f.day IS NULL
           OR f.day <  coalesce(DATE '1970-01-01' + CAST(ceil(epoch_us(CAST($since AS TIMESTAMPTZ)) / 86400000000.0) AS INTEGER), DATE '-infinity')
           OR f.day >= coalesce(DATE '1970-01-01' + CAST(floor(epoch_us(CAST($until AS TIMESTAMPTZ)) / 86400000000.0) AS INTEGER), DATE 'infinity'))
      AND EXISTS (SELECT 1 FROM ru_ok WHERE ok)
    UNION ALL BY NAME
    -- ... and of the days inside that hold a pending session's stored
    -- facts.
    SELECT f.* FROM task_facts_stored f ANTI JOIN facts_pending p USING (session)
    WHERE f.day >= coalesce(DATE '1970-01-01' + CAST(ceil(epoch_us(CAST($since AS TIMESTAMPTZ)) / 86400000000.0) AS INTEGER), DATE '-infinity')
      AND f.day <  coalesce(DATE '1970-01-01' + CAST(floor(epoch_us(CAST($until AS TIMESTAMPTZ)) / 86400000000.0) AS INTEGER), DATE 'infinity')
      AND f.day IN (SELECT day FROM ru_pending)
      AND EXISTS (SELECT 1 FROM ru_ok WHERE ok)
),
