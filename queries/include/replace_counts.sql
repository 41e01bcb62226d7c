-- The counts of the replace evidence per day, agent, model, task type and
-- swap (analyze/rules_replace.sql's header defines them), from the rows of
-- rp_outcomes (include/replace_outcomes.sql). A replan belongs to one
-- session, so to one day, agent and model: the replans of several rows of
-- this add up. Not a statement: a SELECT included by
-- analyze/rules_replace.sql and ingest/rollup_replace.sql where they say
-- "@include include/replace_counts.sql"; the day rollups (replace_days)
-- hold its rows.
SELECT day, agent, model, task_type, from_hint, to_hint,
       count(DISTINCT (session, seq))          AS replans,
       count(*)                                AS added,
       count(*) FILTER (WHERE completed)       AS completed,
       count(*) FILTER (WHERE succeeded)       AS succeeded
FROM rp_outcomes
GROUP BY ALL
