-- Task types: every fact the hints, mappings and rules analyses count, with
-- the task type it belongs to. Not a statement of its own: hints.sql,
-- mappings.sql and rules_replace.sql include it in their WITH list, in
-- place of their line "@include mappings_task_types.sql" (after the comment
-- marker). It is the one definition of a task's type; the file keeps to the
-- mappings prefix because it is the task → type mapping. To run one of
-- those queries by hand, paste this file there.
--
-- Parameters: $since, $until, $agent, $model (sessions, by their start),
-- $task_type (the resolved type below; NULL = all), and the taxonomy:
-- $tax_types and $tax_patterns (parallel lists, one RE2 pattern per type,
-- matched against lower(description); the first match in list order wins)
-- and $tax_fallback (the type of a description nothing matches). At most
-- 32 types are read.
--
-- A task's type is, in order: the task's own task_type, the session's
-- task_type, the taxonomy's classification of its description, the
-- fallback. type_source says which one it was.
--
-- Facts: the rows of task_facts (migrations/0003_stored_facts.sql says
-- what each fact is: call, planned, dropped, stripped, completed), with
-- their sessions' attributes. tt_joined and tt_typed are NOT MATERIALIZED:
-- a query that reads them twice scans task_facts twice, each scan filtered
-- to the facts it needs, which is faster than materialising every fact.
tt_sessions AS (
    SELECT session, agent, agent_version, model, task_type AS session_type, ruleset, day, week, started_at
    FROM session_facts
    WHERE ($since IS NULL OR started_at >= $since)
      AND ($until IS NULL OR started_at < $until)
      AND ($agent IS NULL OR agent = $agent)
      AND ($model IS NULL OR model = $model)
),
tt_joined AS NOT MATERIALIZED (
    SELECT f.fact, f.session, f.seq, f.plan_seq, f.task_id, f.hint, f.tool, f.ok, f.completion,
           f.description, f.agent, f.agent_version, f.model, f.ruleset, f.day, f.week, f.started_at,
           f.given_type, f.given_source
    FROM task_facts f
    WHERE ($since IS NULL OR f.started_at >= $since)
      AND ($until IS NULL OR f.started_at < $until)
      AND ($agent IS NULL OR f.agent = $agent)
      AND ($model IS NULL OR f.model = $model)
),
-- Classify each distinct description once, and only where no type is given.
tt_descriptions AS (
    SELECT DISTINCT lower(description) AS d
    FROM tt_joined
    WHERE given_type IS NULL AND description IS NOT NULL
),
-- One WHEN per taxonomy type, in priority order, up to 32 types (the Go
-- side refuses more): indexing the parameter keeps each pattern a constant,
-- compiled once, where a join against the list would compile it per row.
tt_classified AS (
    SELECT d,
           CASE
             WHEN regexp_matches(d, $tax_patterns[1]) THEN $tax_types[1]
             WHEN regexp_matches(d, $tax_patterns[2]) THEN $tax_types[2]
             WHEN regexp_matches(d, $tax_patterns[3]) THEN $tax_types[3]
             WHEN regexp_matches(d, $tax_patterns[4]) THEN $tax_types[4]
             WHEN regexp_matches(d, $tax_patterns[5]) THEN $tax_types[5]
             WHEN regexp_matches(d, $tax_patterns[6]) THEN $tax_types[6]
             WHEN regexp_matches(d, $tax_patterns[7]) THEN $tax_types[7]
             WHEN regexp_matches(d, $tax_patterns[8]) THEN $tax_types[8]
             WHEN regexp_matches(d, $tax_patterns[9]) THEN $tax_types[9]
             WHEN regexp_matches(d, $tax_patterns[10]) THEN $tax_types[10]
             WHEN regexp_matches(d, $tax_patterns[11]) THEN $tax_types[11]
             WHEN regexp_matches(d, $tax_patterns[12]) THEN $tax_types[12]
             WHEN regexp_matches(d, $tax_patterns[13]) THEN $tax_types[13]
             WHEN regexp_matches(d, $tax_patterns[14]) THEN $tax_types[14]
             WHEN regexp_matches(d, $tax_patterns[15]) THEN $tax_types[15]
             WHEN regexp_matches(d, $tax_patterns[16]) THEN $tax_types[16]
             WHEN regexp_matches(d, $tax_patterns[17]) THEN $tax_types[17]
             WHEN regexp_matches(d, $tax_patterns[18]) THEN $tax_types[18]
             WHEN regexp_matches(d, $tax_patterns[19]) THEN $tax_types[19]
             WHEN regexp_matches(d, $tax_patterns[20]) THEN $tax_types[20]
             WHEN regexp_matches(d, $tax_patterns[21]) THEN $tax_types[21]
             WHEN regexp_matches(d, $tax_patterns[22]) THEN $tax_types[22]
             WHEN regexp_matches(d, $tax_patterns[23]) THEN $tax_types[23]
             WHEN regexp_matches(d, $tax_patterns[24]) THEN $tax_types[24]
             WHEN regexp_matches(d, $tax_patterns[25]) THEN $tax_types[25]
             WHEN regexp_matches(d, $tax_patterns[26]) THEN $tax_types[26]
             WHEN regexp_matches(d, $tax_patterns[27]) THEN $tax_types[27]
             WHEN regexp_matches(d, $tax_patterns[28]) THEN $tax_types[28]
             WHEN regexp_matches(d, $tax_patterns[29]) THEN $tax_types[29]
             WHEN regexp_matches(d, $tax_patterns[30]) THEN $tax_types[30]
             WHEN regexp_matches(d, $tax_patterns[31]) THEN $tax_types[31]
             WHEN regexp_matches(d, $tax_patterns[32]) THEN $tax_types[32]
           END AS type
    FROM tt_descriptions
),
tt_typed AS NOT MATERIALIZED (
    SELECT j.* EXCLUDE (given_type, given_source),
           coalesce(j.given_type, c.type, $tax_fallback)   AS task_type,
           coalesce(j.given_source,
                    CASE WHEN c.type IS NOT NULL THEN 'taxonomy' ELSE 'fallback' END) AS type_source
    FROM tt_joined j
    -- One equality (the key is NULL where a type is given), so that this is
    -- a hash join: "given_type IS NULL AND c.d = …" made DuckDB plan a
    -- nested-loop join, hours on millions of untyped tasks.
    LEFT JOIN tt_classified c
           ON c.d = CASE WHEN j.given_type IS NULL THEN lower(j.description) END
    WHERE $task_type IS NULL OR coalesce(j.given_type, c.type, $tax_fallback) = $task_type
),
