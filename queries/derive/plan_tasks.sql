-- The tasks of each plan version → plan_tasks. A task is new in a version
-- unless a replan kept it (kept holds the ids of kept completed tasks).
-- The cost follows the number of tasks, however they are spread over
-- plans: each event's tasks and kept ids are read from its JSON once,
-- unnested in the select list (with generate_subscripts for the 1-based
-- position), and joined on (event, task id). Two forms are quadratic in a
-- plan's size and must not come back: reading kept per task (each read
-- parses the whole data member again) and unnesting in a lateral join
-- (FROM b, unnest(...)), which DuckDB runs per element. An event is
-- (source, id): unique in a batch and in the event log, while (session,
-- seq) may repeat.
INSERT INTO plan_tasks
WITH p AS (
    SELECT source, id, session, seq, type,
           from_json(data->'$.tasks',
               '[{"id":"BIGINT","description":"VARCHAR","tool_hint":"VARCHAR","completed":"BOOLEAN","task_type":"VARCHAR"}]') AS tasks,
           CASE WHEN type = 'agent.plan.updated' THEN from_json(data->'$.kept', '["BIGINT"]') END AS kept
    FROM batch_events
    WHERE type = 'agent.plan.created'
       OR (type = 'agent.plan.updated' AND CAST(data->>'$.valid' AS BOOLEAN))
), t AS (
    SELECT source, id, session, seq, type, unnest(tasks) AS task, generate_subscripts(tasks, 1) AS pos
    FROM p
), k AS (
    SELECT DISTINCT source, id, task_id
    FROM (SELECT source, id, unnest(kept) AS task_id FROM p)
)
SELECT t.session, t.seq, CAST(t.pos AS BIGINT),
       t.task.id, t.task.description, t.task.tool_hint, t.task.completed, t.task.task_type,
       t.type = 'agent.plan.created' OR k.task_id IS NULL
FROM t
LEFT JOIN k ON k.source = t.source AND k.id = t.id AND k.task_id = t.task.id;
