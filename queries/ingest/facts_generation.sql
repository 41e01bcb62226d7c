-- Record a refresh of the stored facts (ingest/refresh_facts.sql, all its
-- passes done) as the next generation: the row counts of the typed tables
-- in its snapshot (migrations/0008_facts_bounds.sql). Every session with
-- rows in that snapshot is stored now, so the rows of any session first
-- stored by a later refresh come after these counts.
INSERT INTO facts_generations
SELECT coalesce(max(gen) + 1, 0),
       (SELECT count(*) FROM events),
       (SELECT count(*) FROM session_starts),
       (SELECT count(*) FROM session_ends),
       (SELECT count(*) FROM plans),
       (SELECT count(*) FROM plan_tasks),
       (SELECT count(*) FROM replans),
       (SELECT count(*) FROM replan_dropped),
       (SELECT count(*) FROM hints_stripped),
       (SELECT count(*) FROM tool_calls),
       (SELECT count(*) FROM task_completions)
FROM facts_generations;
