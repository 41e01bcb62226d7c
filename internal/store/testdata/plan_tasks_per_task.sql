-- The derivation of plan_tasks before issue 12 (a lateral unnest that read kept
-- per task: quadratic in a plan's size), as a SELECT. derive_test.go checks
-- that queries/derive/plan_tasks.sql gives the same rows.
SELECT b.session, b.seq, CAST(t.pos AS BIGINT),
       t.task.id, t.task.description, t.task.tool_hint, t.task.completed, t.task.task_type,
       b.type = 'agent.plan.created'
           OR NOT list_contains(coalesce(from_json(b.data->'$.kept', '["BIGINT"]'), []::BIGINT[]), t.task.id)
FROM batch_events b,
     unnest(from_json(b.data->'$.tasks',
        '[{"id":"BIGINT","description":"VARCHAR","tool_hint":"VARCHAR","completed":"BOOLEAN","task_type":"VARCHAR"}]'))
        WITH ORDINALITY AS t(task, pos)
WHERE b.type = 'agent.plan.created'
   OR (b.type = 'agent.plan.updated' AND CAST(b.data->>'$.valid' AS BOOLEAN))
