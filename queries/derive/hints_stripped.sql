-- agent.hint.stripped → hints_stripped
INSERT INTO hints_stripped
SELECT session, source, id, seq, time,
       CAST(data->>'$.task_id' AS BIGINT),
       data->>'$.tool_hint',
       data->>'$.phase',
       data->>'$.reason',
       data->>'$.rule_id'
FROM batch_events
WHERE type = 'agent.hint.stripped';
