-- Task types: every fact the hints, mappings and rules analyses count, with
-- the task type it belongs to. Not a statement of its own: hints.sql,
-- mappings.sql and rules_replace.sql include it in their WITH list, in
-- place of their line "@include analyze/mappings_task_types.sql" (after the comment
-- marker). It is the one definition of a task's type; the file keeps to the
-- mappings prefix because it is the task → type mapping. To run one of
-- those queries by hand, paste this file there.
--
-- Parameters: $since, $until, $agent, $model (sessions, by their start),
-- $task_type (the resolved type below; NULL = all), and the taxonomy:
-- $tax_types and $tax_patterns (parallel lists, one RE2 pattern per type,
-- matched against lower(description); the first match in list order wins)
-- and $tax_fallback (the type of a description nothing matches), and
-- $tax_id (the taxonomy's id: the stored classification serves when
-- facts_classifier records the same). At most 32 types are read.
--
-- A task's type is, in order: the task's own task_type, the session's
-- task_type, the taxonomy's classification of its description, the
-- fallback. type_source says which one it was.
--
-- Facts: the rows of task_facts (views/task_facts_pending.sql says
-- what each fact is: call, planned, dropped, stripped, completed), with
-- their sessions' attributes. tt_joined and tt_typed are NOT MATERIALIZED:
-- a query that reads them twice scans task_facts twice, each scan filtered
-- to the facts it needs, which is faster than materialising every fact.
tt_sessions AS (
    SELECT session, agent, agent_version, model, task_type AS session_type, ruleset, day, week, started_at
    FROM session_facts
    WHERE
    -- @include include/session_filter.sql
),
-- The stored facts' classification serves when it was made with this
-- taxonomy ($tax_id; facts_classifier records the ingester's).
tt_cache AS (
    SELECT coalesce(any_value(classifier) = $tax_id, false) AS ok FROM facts_classifier
),
tt_joined AS NOT MATERIALIZED (
    SELECT f.fact, f.session, f.seq, f.plan_seq, f.task_id, f.hint, f.tool, f.ok, f.completion,
           f.description, f.agent, f.agent_version, f.model, f.ruleset, f.day, f.week, f.started_at,
           f.given_type, f.given_source,
           f.classified, f.classified AND k.ok AS cached, f.class_type
    FROM task_facts f, tt_cache k
    WHERE
    -- @include include/session_filter.sql
),
-- Classify each distinct description once, and only where no type is
-- given and the stored classification does not serve.
tt_descriptions AS (
    SELECT DISTINCT lower(description) AS d
    FROM (
        -- Written as two plain filters, not "NOT cached", so that when the
        -- stored classification serves, the scan skips every row (and
        -- never reads the descriptions).
        SELECT description FROM tt_joined
        WHERE given_type IS NULL AND NOT classified AND description IS NOT NULL
        UNION ALL
        SELECT description FROM tt_joined
        WHERE given_type IS NULL AND classified AND description IS NOT NULL
          AND EXISTS (SELECT 1 FROM tt_cache WHERE NOT ok)
    )
),
tt_classified AS (
    SELECT d,
           -- @include include/classify_case.sql
           AS type
    FROM tt_descriptions
),
tt_typed AS NOT MATERIALIZED (
    SELECT j.* EXCLUDE (given_type, given_source, classified, cached, class_type, classified_type),
           coalesce(j.given_type, j.classified_type, $tax_fallback) AS task_type,
           coalesce(j.given_source,
                    CASE WHEN j.classified_type IS NOT NULL THEN 'taxonomy' ELSE 'fallback' END) AS type_source
    FROM (
        SELECT j.*, CASE WHEN j.cached THEN j.class_type ELSE c.type END AS classified_type
        FROM tt_joined j
        -- One equality (the key is NULL where no classification is
        -- needed), so that this is a hash join: a guard such as
        -- "given_type IS NULL AND c.d = …" made DuckDB plan a nested-loop
        -- join, hours on millions of untyped tasks.
        LEFT JOIN tt_classified c
               ON c.d = CASE WHEN j.given_type IS NULL AND NOT j.cached THEN lower(j.description) END
    ) j
    WHERE $task_type IS NULL OR coalesce(j.given_type, j.classified_type, $tax_fallback) = $task_type
),
