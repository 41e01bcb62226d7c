-- The pending tasks each replan replaced → replan_dropped
INSERT INTO replan_dropped
SELECT b.session, b.seq, CAST(t.pos AS BIGINT),
       t.task.id, t.task.description, t.task.tool_hint, t.task.task_type
FROM batch_events b,
     unnest(from_json(b.data->'$.dropped',
        '[{"id":"BIGINT","description":"VARCHAR","tool_hint":"VARCHAR","completed":"BOOLEAN","task_type":"VARCHAR"}]'))
        WITH ORDINALITY AS t(task, pos)
WHERE b.type = 'agent.plan.updated';
