-- The derivation of replan_dropped before issue 12 (a lateral unnest:
-- quadratic in the list's length), as a SELECT. derive_test.go checks that
-- queries/derive/replan_dropped.sql gives the same rows.
SELECT b.session, b.seq, CAST(t.pos AS BIGINT),
       t.task.id, t.task.description, t.task.tool_hint, t.task.task_type
FROM batch_events b,
     unnest(from_json(b.data->'$.dropped',
        '[{"id":"BIGINT","description":"VARCHAR","tool_hint":"VARCHAR","completed":"BOOLEAN","task_type":"VARCHAR"}]'))
        WITH ORDINALITY AS t(task, pos)
WHERE b.type = 'agent.plan.updated'
