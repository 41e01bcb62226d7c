-- Which days an analysis reads from the day rollups (migrations/
-- 0012_rollups.sql) and which from the facts. Not a statement: CTEs
-- included right after a WITH by analyze/hints.sql and
-- analyze/rules_replace.sql, where they say "@include
-- include/rollup_split.sql", before analyze/mappings_task_types.sql,
-- whose task_facts they replace with the facts of the days not read from
-- the rollups; include/rollup_served.sql selects the rollup rows of the
-- others. A day is read from the rollups when
--   the rollups were built with this taxonomy ($tax_id, ru_ok),
--   it lies whole in [$since, $until) (UTC days; an open end is no
--   bound), and
--   none of its sessions is pending (ru_pending: a pending session's
--   stored facts, which the rollups hold, are not its facts now; its
--   facts now are of the day its computed facts say, or have no day).
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
    SELECT day FROM session_facts_stored WHERE session IN (SELECT session FROM facts_pending)
    UNION
    SELECT day FROM ru_pending_facts
),
task_facts AS (
    -- The pending sessions' facts, whatever their day (it is in
    -- ru_pending) ...
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
           OR f.day <  coalesce(CAST(timezone('UTC', $since) + INTERVAL 1 DAY - INTERVAL 1 MICROSECOND AS DATE), DATE '-infinity')
           OR f.day >= coalesce(CAST(timezone('UTC', $until) AS DATE), DATE 'infinity'))
      AND EXISTS (SELECT 1 FROM ru_ok WHERE ok)
    UNION ALL BY NAME
    -- ... and of the days inside that a pending session started on.
    SELECT f.* FROM task_facts_stored f ANTI JOIN facts_pending p USING (session)
    WHERE f.day >= coalesce(CAST(timezone('UTC', $since) + INTERVAL 1 DAY - INTERVAL 1 MICROSECOND AS DATE), DATE '-infinity')
      AND f.day <  coalesce(CAST(timezone('UTC', $until) AS DATE), DATE 'infinity')
      AND f.day IN (SELECT day FROM ru_pending)
      AND EXISTS (SELECT 1 FROM ru_ok WHERE ok)
),
