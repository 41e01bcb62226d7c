-- The rollup rows an analysis reads (include/rollup_split.sql says which
-- days those are), filtered as analyze/mappings_task_types.sql filters
-- the facts: by agent, model and resolved task type. Not a statement: the
-- conditions of a WHERE clause on the columns day, agent, model and
-- task_type of hint_days or replace_days, included by analyze/hints.sql
-- and analyze/rules_replace.sql where they say "@include
-- include/rollup_served.sql", in a query that includes rollup_split.sql.
-- Parameters: $since, $until (TIMESTAMPTZ), $agent, $model, $task_type
-- (VARCHAR; NULL = all).
EXISTS (SELECT 1 FROM ru_ok WHERE ok)
AND day >= coalesce(DATE '1970-01-01' + CAST(ceil(epoch_us(CAST($since AS TIMESTAMPTZ)) / 86400000000.0) AS INTEGER), DATE '-infinity')
AND day <  coalesce(DATE '1970-01-01' + CAST(floor(epoch_us(CAST($until AS TIMESTAMPTZ)) / 86400000000.0) AS INTEGER), DATE 'infinity')
AND day NOT IN (SELECT day FROM ru_pending WHERE day IS NOT NULL)
AND ($agent IS NULL OR agent = $agent)
AND ($model IS NULL OR model = $model)
AND ($task_type IS NULL OR task_type = $task_type)
