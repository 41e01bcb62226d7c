-- The pending tasks each replan replaced → replan_dropped. The list is
-- unnested in the select list, with generate_subscripts for the 1-based
-- position: a lateral join (FROM b, unnest(...)) would cost the square of
-- the list's length (see plan_tasks.sql).
INSERT INTO replan_dropped
SELECT session, seq, CAST(pos AS BIGINT),
       task.id, task.description, task.tool_hint, task.task_type
FROM (
    SELECT session, seq, unnest(dropped) AS task, generate_subscripts(dropped, 1) AS pos
    FROM (
        SELECT session, seq,
               from_json(data->'$.dropped',
                   '[{"id":"BIGINT","description":"VARCHAR","tool_hint":"VARCHAR","completed":"BOOLEAN","task_type":"VARCHAR"}]') AS dropped
        FROM batch_events
        WHERE type = 'agent.plan.updated'
    )
);
