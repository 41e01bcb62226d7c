-- The -by grouping: one column per dimension an analysis can group by, in
-- the order of metrics.Dimensions (a test in internal/metrics fails when
-- the two differ), each the row's value where $by names the dimension and
-- NULL where it does not, so that the grouping is data, not SQL text. day
-- and week come out as text, YYYY-MM-DD. Not a statement: analyze/replans.sql,
-- trend.sql, effect.sql, hints.sql and mappings.sql include it in a select
-- list where they say "@include include/by_dimensions.sql"; the item after
-- it starts with a comma. It reads the columns agent, agent_version, model,
-- task_type, day, week (DATE) and ruleset of the rows selected.
-- Parameters: $by (VARCHAR[]: the grouping dimensions).
CASE WHEN list_contains($by, 'agent')         THEN agent END                 AS agent,
CASE WHEN list_contains($by, 'agent_version') THEN agent_version END         AS agent_version,
CASE WHEN list_contains($by, 'model')         THEN model END                 AS model,
CASE WHEN list_contains($by, 'task_type')     THEN task_type END             AS task_type,
CASE WHEN list_contains($by, 'day')           THEN CAST(day AS VARCHAR) END  AS day,
CASE WHEN list_contains($by, 'week')          THEN CAST(week AS VARCHAR) END AS week,
CASE WHEN list_contains($by, 'ruleset')       THEN ruleset END               AS ruleset
