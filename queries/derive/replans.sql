-- agent.plan.updated (every call, valid or not) → replans
INSERT INTO replans
SELECT session, source, id, seq, time,
       CAST(data->>'$.replan' AS BIGINT),
       data->>'$.trigger',
       data->>'$.reason',
       CAST(data->>'$.valid' AS BOOLEAN),
       CAST(data->>'$.over_cap' AS BOOLEAN),
       data->>'$.error',
       CAST(json_array_length(data->'$.tasks') AS BIGINT),
       from_json(data->'$.kept', '["BIGINT"]'),
       CAST(json_array_length(data->'$.dropped') AS BIGINT)
FROM batch_events
WHERE type = 'agent.plan.updated';
